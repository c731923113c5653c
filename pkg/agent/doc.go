// Package agent owns pull mode's member side, `federator agent`: a process
// in a member cluster the hub cannot reach, which registers that cluster
// with the hub in Pull mode, keeps its Cluster status, and applies the
// Works of its execution namespace to it. It decides no hold: it runs the
// hub's own dispatcher (pkg/dispatch), countdown (pkg/softdelete) and
// status (pkg/clusterstatus) controllers for its one cluster, so every
// hold the hub wrote into a Work holds there, and every Freeze is checked
// before each write, as on the hub.
package agent
