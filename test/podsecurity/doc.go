// Package podsecurity proves against the real API server that its Pod Security admission, enforcing
// the "restricted" profile on a namespace, admits the Pods the operator generates (instance Pods,
// the Pods of backup Jobs) and the operator's own Pod, as installed from config/.
package podsecurity
