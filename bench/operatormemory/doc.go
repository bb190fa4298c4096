// Command operatormemory measures the operator's memory in a cluster full of objects that are not
// its own: it starts the real API server, runs one or more `manager controller` binaries against
// it (each as its own process, with the admin credentials), measures their resident set size and
// Go heap, creates -pods unrelated Pods and -secrets unrelated Secrets (and one Cluster), and
// measures again once the operators have seen them. A binary whose cache holds only its own
// objects stays flat; one that caches every Pod grows with them.
//
//	go build -o /tmp/manager-after ./cmd/manager
//	git archive <older commit> | tar -x -C /tmp/before && (cd /tmp/before && go build -o /tmp/manager-before ./cmd/manager)
//	go run ./bench/operatormemory -manager before=/tmp/manager-before -manager after=/tmp/manager-after
//
// eval "$(bash hack/substrate.sh env)" first. Both binaries run at once against the same objects.
package main
