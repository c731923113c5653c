// Package moduleversions holds one test: the modules hack/karmada-e2e (a
// module of its own, building Karmada's e2e suite) shares with federator
// are required at the same versions. Go's build cache is then shared: by
// the time `make test` builds Karmada's suite, federator's builds have
// compiled nearly every package it needs (docs/testing.md says what that
// saves). A Karmada or dependency upgrade that drifts them apart fails here
// with the `go get` line that aligns them.
package moduleversions
