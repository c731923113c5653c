// Package analysis owns judging a cluster by its metrics, as Argo Rollouts'
// analysis judges a canary inside one cluster: a query template rendered
// for the cluster (query.go), run against a provider (Prometheus's HTTP API,
// prometheus.go), its result judged by success and failure conditions in
// Argo's expression language (condition.go), and a cluster's measurements
// summed up into its analysis' verdict (assess.go). It decides and
// measures; it holds no state and writes nothing: the rollout controller
// keeps the measurements in the Rollout's status and acts on the verdicts.
package analysis
