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
//
// On the project's 2-core machine, before (every Pod cached) and after (only the operator's
// labelled objects, no managedFields), 10,000 Pods and 10,000 Secrets in 10 namespaces:
//
//	manager           RSS empty       RSS full     heap empty      heap full
//	before             37.1 MiB      256.5 MiB        6.3 MiB      195.4 MiB
//	after              38.2 MiB       47.0 MiB        6.0 MiB        9.7 MiB
package main
