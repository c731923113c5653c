package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Where the CPU of a phase goes: on a machine whose cores every process of
// the fleet shares, a phase that keeps them all busy is as fast as the CPU
// it costs allows, and the ratio of two such phases' times is the ratio of
// their CPU. cpuUse tells that from /proc: the CPU seconds of each role
// (federator, the hub API server, the members' API servers, the etcds,
// this program's clients and watches) and how many cores were busy.

// Roles a fleet process plays, in the order they are printed.
const (
	roleFederator     = "federator"
	roleHubAPIServer  = "hub kube-apiserver"
	roleMemberServers = "member kube-apiservers"
	roleEtcd          = "etcds"
	roleBench         = "benchfleet (clients, watches)"
)

var roles = []string{roleFederator, roleHubAPIServer, roleMemberServers, roleEtcd, roleBench}

// cpuSample is the CPU seconds each role has used so far, and when.
type cpuSample struct {
	at     time.Time
	byRole map[string]float64
}

// cpuUse is what a phase cost: CPU seconds by role over its wall time.
type cpuUse struct {
	Wall   float64            `json:"wallSeconds"`
	ByRole map[string]float64 `json:"cpuSecondsByRole"`
}

// Total is the CPU seconds of every role.
func (u cpuUse) Total() float64 {
	var t float64
	for _, v := range u.ByRole {
		t += v
	}
	return t
}

// Cores is how many cores were busy on average.
func (u cpuUse) Cores() float64 {
	if u.Wall <= 0 {
		return 0
	}
	return u.Total() / u.Wall
}

// sampleCPU reads the CPU seconds of this process and of every process it
// started (the fleet's API servers and etcds, federator), by role.
func sampleCPU(federatorPID, hubAPIServerPID int) cpuSample {
	s := cpuSample{at: time.Now(), byRole: map[string]float64{}}
	self := os.Getpid()
	s.byRole[roleBench] = cpuSeconds(self)
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		comm, ppid, ok := commAndParent(p)
		if !ok || ppid != self {
			continue
		}
		switch {
		case pid == federatorPID:
			s.byRole[roleFederator] += cpuSeconds(pid)
		case pid == hubAPIServerPID:
			s.byRole[roleHubAPIServer] += cpuSeconds(pid)
		case comm == "kube-apiserver":
			s.byRole[roleMemberServers] += cpuSeconds(pid)
		case comm == "etcd":
			s.byRole[roleEtcd] += cpuSeconds(pid)
		}
	}
	return s
}

// since is the CPU used between an earlier sample and this one.
func (s cpuSample) since(earlier cpuSample) cpuUse {
	u := cpuUse{Wall: s.at.Sub(earlier.at).Seconds(), ByRole: map[string]float64{}}
	for role, v := range s.byRole {
		if d := v - earlier.byRole[role]; d > 0 {
			u.ByRole[role] = d
		}
	}
	return u
}

// commAndParent reads a process's command name and parent from its stat.
func commAndParent(statPath string) (string, int, bool) {
	raw, err := os.ReadFile(statPath)
	if err != nil {
		return "", 0, false
	}
	s := string(raw)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open || closing+2 > len(s) {
		return "", 0, false
	}
	fields := strings.Fields(s[closing+2:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return s[open+1 : closing], ppid, err == nil
}

// describe is one line per role: CPU seconds, and per object written.
func (u cpuUse) describe(objects int) []string {
	var out []string
	for _, role := range roles {
		v, ok := u.ByRole[role]
		if !ok {
			continue
		}
		out = append(out, fmt.Sprintf("%s %.1fs (%.1f ms per object)", role, v, 1000*v/float64(objects)))
	}
	return out
}

// Phases whose CPU is measured, in the order they run.
const (
	phaseBaselineCreate = "direct: create"
	phaseBaselineUpdate = "direct: update"
	phasePropagation    = "federator: propagation"
	phaseSuspension     = "federator: suspension visible"
	phaseResume         = "federator: resume → new version everywhere"
)

var phases = []string{phaseBaselineCreate, phaseBaselineUpdate, phasePropagation, phaseSuspension, phaseResume}

// printCPU tells, per phase, how many cores were busy and where the CPU
// went, then compares federator's phases with the direct writes they
// match: when both keep the cores busy, the time ratio is the CPU ratio.
func printCPU(out io.Writer, byPhase map[string]cpuUse, objects, cores int) {
	fmt.Fprintf(out, "\nCPU by phase (%d cores; per object: per member object written, %d in all)\n", cores, objects)
	t := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(t, "PHASE\tWALL\tCPU\tCORES BUSY\tWHERE")
	for _, phase := range phases {
		u, ok := byPhase[phase]
		if !ok {
			continue
		}
		fmt.Fprintf(t, "%s\t%.2fs\t%.1fs\t%.2f\t%s\n", phase, u.Wall, u.Total(), u.Cores(), strings.Join(u.describe(objects), ", "))
	}
	_ = t.Flush()
	for _, pair := range [][2]string{{phasePropagation, phaseBaselineCreate}, {phaseResume, phaseBaselineUpdate}} {
		fed, direct := byPhase[pair[0]], byPhase[pair[1]]
		if direct.Wall <= 0 || direct.Total() <= 0 {
			continue
		}
		fmt.Fprintf(out, "%s against %s: %.1f× the time, %.1f× the CPU\n", pair[0], pair[1],
			fed.Wall/direct.Wall, fed.Total()/direct.Total())
	}
}
