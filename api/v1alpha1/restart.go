package v1alpha1

// RestartedAtAnnotation on a Cluster, set by `kubectl cnmysql restart CLUSTER`, is copied into
// every instance's Pod spec: a new value restarts every instance in the rolling update's order
// (replicas first, then the primary as primaryUpdateStrategy and primaryUpdateMethod say).
const RestartedAtAnnotation = labelPrefix + "restartedAt"

// ReloadedAtAnnotation on a Cluster, set by `kubectl cnmysql reload CLUSTER`, makes every
// instance apply spec.mysql.parameters again at runtime, each value set afresh, as after a change.
const ReloadedAtAnnotation = labelPrefix + "reloadedAt"
