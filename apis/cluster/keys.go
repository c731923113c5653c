package cluster

// ControllerFinalizer holds a Cluster until the hub has let go of its
// member: every Work in its execution namespace deleted (and with them the
// objects they placed there, as the dispatcher decides) and no binding
// targeting it. Karmada's cluster controller puts the same finalizer
// (util.ClusterControllerFinalizer) on every Cluster.
const ControllerFinalizer = "karmada.io/cluster-controller"
