// Package layout owns the project's import rules, checked by its test: which
// package may import which, so that imports point one way.
//
//   - A controller package (a package under pkg/ that registers a controller:
//     it declares Setup or Setup...WithManager) imports no other controller
//     package; shared controller helpers live under internal/.
//   - Only pkg/hub, pkg/agent and cmd/federator import controller packages
//     (tests aside); the CLI (cmd/federator/cli) reads what it shares with a
//     controller from internal/ (internal/manifest, internal/leaving).
//   - Pure decision packages (pkg/hold, pkg/placement, pkg/gatestate,
//     pkg/copystate, and pkg/analysis, which also queries Prometheus over
//     HTTP) import neither
//     controller-runtime nor client-go, nor any federator package but apis/.
//   - apis/ imports nothing of federator but apis/; internal/ nothing of pkg/,
//     except test-support packages named like httptest (internal/fleettest),
//     which only tests import.
//
// And every package's tests run somewhere: some `go test` line of the
// Makefile names the package (tests_test.go).
package layout
