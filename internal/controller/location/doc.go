// Package location claims each Cluster's object store location for its incarnation.
//
// A location is <path>/<serverName>/ of spec.backup.objectStore. It belongs to one Cluster
// incarnation (one metadata.uid): the operator writes a marker, _location.json, by conditional
// write on first use, and only the incarnation the marker names backs up, archives and runs
// retention there. A re-created Cluster of the same name, a Cluster of the same name in another
// namespace, and a recovery Cluster pointed at its source's location find another incarnation's
// marker (or data without a marker) and are reported as ObjectStoreInUse rather than mixing two
// histories. spec.backup.continueHistory takes a location over when the new Cluster was recovered
// from it, the old holder is gone and the new primary has executed every transaction the
// location holds.
//
// The decision is Decide (decide.go), a pure function; the reconciler gathers, decides and acts.
package location
