module github.com/federator-dev/federator/hack/karmada-e2e

go 1.24.10

require (
	github.com/karmada-io/karmada v1.16.0
	github.com/onsi/ginkgo/v2 v2.23.4
)
