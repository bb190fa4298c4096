// Package ctrlworld is the test world of the controller packages: one namespace on a shared
// real API server (with kube-controller-manager when the package asks for it), a fake clock the
// test advances, an Event recorder, a controller-runtime manager limited to the namespace, and,
// when a test needs one, a real S3 store (versitygw) with a fault-injecting proxy in front.
//
// Each controller package declares one Shared in its TestMain and builds a World per test; the
// package's own world type embeds *World and adds what only that controller needs.
package ctrlworld
