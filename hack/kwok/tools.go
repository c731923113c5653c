//go:build tools

// Package tools pins kwok, whose simulated nodes and pod lifecycle (Stages)
// members run when the fleet runs workloads. It is a module of its own so
// kwok's dependencies never move those of the Kubernetes binaries in
// hack/tools.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
