package placement

// EventReasonUnknownCluster is the Event reason when a policy names a
// cluster that is not registered.
const EventReasonUnknownCluster = "UnknownCluster"
