package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runUp runs `federator up` with args and returns what it printed and its error.
func runUp(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand("federator")
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"up"}, args...))
	err := root.Execute()
	return out.String(), err
}

// TestUpRefusesMorePullMembersThanMembers: --pull-members counts among
// --members; a count outside 0..members is refused before anything starts.
func TestUpRefusesMorePullMembersThanMembers(t *testing.T) {
	for _, n := range []string{"4", "-1"} {
		dir := filepath.Join(t.TempDir(), "fleet")
		cmd := newUpCommand()
		cmd.SetArgs([]string{"--members", "3", "--pull-members", n, "--dir", dir})
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "--pull-members is "+n+": it counts the last of the 3 members") {
			t.Errorf("--pull-members %s: %v; want a refusal naming the flag", n, err)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Errorf("--pull-members %s: %s was created", n, dir)
		}
	}
}

// Flags of one provider are refused with the other rather than ignored.
func TestUpRefusesFlagsOfTheOtherProvider(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-image", "x"}, "--node-image does not apply to --provider local"},
		{[]string{"--provider", "kind", "--nodes", "3"}, "--nodes does not apply to --provider kind"},
		{[]string{"--provider", "kind", "--bin-dir", "bin"}, "--bin-dir does not apply to --provider kind"},
		{[]string{"--provider", "kind", "--prometheus"}, "--prometheus does not apply to --provider kind"},
		{[]string{"--provider", "vm"}, `--provider "vm": use local (no container engine needed) or kind`},
		{[]string{"--engine", "podman"}, "--engine does not apply to --provider local"},
		{[]string{"--provider", "kind", "--engine", "lxc"}, `--engine "lxc": use auto, docker or podman`},
		{[]string{"--provider", "kind", "--kind-prefix", "Fleet"}, `kind cluster prefix "Fleet": use lowercase letters`},
	} {
		_, err := runUp(t, append(tc.args, "--dir", filepath.Join(t.TempDir(), "fleet"))...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("up %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}
