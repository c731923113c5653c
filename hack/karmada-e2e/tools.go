//go:build tools

// Package tools pins Karmada v1.16.0's own end-to-end suite
// (test/e2e/suites/base), which make karmada-e2e builds unmodified with
// `go test -c` and runs against a federator fleet, and Karmada's own
// karmada-agent (cmd/agent), which make karmada-agent builds unmodified and
// the e2e suite runs as a Pull member of a federator hub. It is a module of
// its own so the suite's dependencies (kind, ginkgo, Karmada's test helpers)
// never move federator's.
package tools

import (
	_ "github.com/karmada-io/karmada/cmd/agent/app"
	_ "github.com/karmada-io/karmada/test/e2e/suites/base"
)
