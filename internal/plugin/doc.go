// Package plugin implements the verbs of the kubectl plugin `kubectl cloudnative-mysql`. Verbs
// only write declarative objects or status the operator acts on; they never talk to MySQL.
package plugin
