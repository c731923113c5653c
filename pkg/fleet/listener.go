package fleet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listenerOwned reports whether process pid holds the socket listening on
// port. A program told a port that another
// program took a moment before (twenty members start at once) exits with
// "address already in use" — after its health check may already have been
// answered by the other program on that port; this tells the two apart.
// ok is false when the kernel's tables cannot be read (not Linux): the
// caller then trusts the health check alone.
func listenerOwned(pid, port int) (owned, ok bool) {
	inodes, err := listeningInodes(port)
	if err != nil {
		return false, false
	}
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return false, false
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if err != nil {
			continue
		}
		if inode, found := strings.CutPrefix(target, "socket:["); found && inodes[strings.TrimSuffix(inode, "]")] {
			return true, true
		}
	}
	return false, true
}

// listeningInodes are the inodes of the TCP sockets (IPv4 and IPv6)
// listening on port.
func listeningInodes(port int) (map[string]bool, error) {
	want := fmt.Sprintf(":%04X", port)
	inodes := map[string]bool{}
	read := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		read++
		s := bufio.NewScanner(f)
		s.Scan() // the header
		for s.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(s.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			if strings.HasSuffix(fields[1], want) {
				inodes[fields[9]] = true
			}
		}
		f.Close()
	}
	if read == 0 {
		return nil, fmt.Errorf("no /proc/net/tcp")
	}
	return inodes, nil
}
