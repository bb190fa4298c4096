#!/usr/bin/env bash
# demo.sh is `make demo-controlplane`, the lighter demo (`make demo` is hack/demo-node.sh, on a
# real node): a local control plane (etcd, kube-apiserver, kube-controller-manager), the operator
# running against it, and the samples of config/samples applied; then it prints what the operator
# did. `bash hack/demo.sh down` stops a demo left running with DEMO_KEEP=1.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO_DIR=$CNM_CACHE/demo
DEMO_NS=demo
KUBECONFIG_FILE=$DEMO_DIR/kubeconfig
KUBECTL=$CNM_K8S_BIN/kubectl
PROBES=127.0.0.1:18081

k() { "$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

stop_pid() {
	local f=$DEMO_DIR/$1.pid
	[ -f "$f" ] || return 0
	local pid
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

down() {
	stop_pid operator
	stop_pid devcluster
	log "demo stopped"
}

wait_for() { # wait_for SECONDS DESCRIPTION PIDNAME COMMAND...: fails early if PIDNAME died
	local secs=$1 what=$2 pidname=$3
	shift 3
	for _ in $(seq 1 $((secs * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		if ! kill -0 "$(cat "$DEMO_DIR/$pidname.pid")" 2>/dev/null; then
			tail -n 20 "$DEMO_DIR/$pidname.log" >&2
			die "$pidname exited while waiting for $what (log: $DEMO_DIR/$pidname.log)"
		fi
		sleep 0.2
	done
	die "timed out waiting for $what"
}

up() {
	command -v curl >/dev/null || apt_install curl
	down 2>/dev/null
	mkdir -p "$DEMO_DIR"
	rm -f "$KUBECONFIG_FILE"
	(cd "$CNM_ROOT" && go build -o "$DEMO_DIR/devcluster" ./hack/devcluster && go build -o "$DEMO_DIR/manager" ./cmd/manager)

	log "starting the local control plane (etcd, kube-apiserver, kube-controller-manager $K8S_VERSION)"
	KUBEBUILDER_ASSETS=$CNM_K8S_BIN setsid "$DEMO_DIR/devcluster" -write-kubeconfig "$KUBECONFIG_FILE" \
		>"$DEMO_DIR/devcluster.log" 2>&1 &
	echo $! >"$DEMO_DIR/devcluster.pid"
	wait_for 60 "the control plane" devcluster test -s "$KUBECONFIG_FILE"
	k create namespace cloudnative-mysql-system >/dev/null
	k create namespace "$DEMO_NS" >/dev/null

	log "starting the operator (manager controller)"
	# The operator runs on this host, and config/samples names an object store on its loopback
	# (127.0.0.1:9000): allowed here only, the operator refuses loopback endpoints by default.
	setsid "$DEMO_DIR/manager" controller --kubeconfig "$KUBECONFIG_FILE" \
		--leader-election-namespace cloudnative-mysql-system \
		--metrics-bind-address 127.0.0.1:18080 --health-probe-bind-address "$PROBES" \
		--object-store-allowed-cidrs 127.0.0.1/32 \
		>"$DEMO_DIR/operator.log" 2>&1 &
	echo $! >"$DEMO_DIR/operator.pid"
	wait_for 60 "the operator to be ready" operator curl -fsS "http://$PROBES/readyz"

	log "applying config/samples to namespace $DEMO_NS"
	k apply --server-side -n "$DEMO_NS" -k "$CNM_ROOT/config/samples"
	sleep "${DEMO_SETTLE_SECONDS:-5}"
	show
}

show() {
	echo
	echo "== Objects in namespace $DEMO_NS"
	k get clusters,scheduledbackups,backups -n "$DEMO_NS" -o wide
	echo
	echo "== Operator leader election"
	k get lease -n cloudnative-mysql-system cloudnative-mysql-operator \
		-o custom-columns=LEASE:.metadata.name,HOLDER:.spec.holderIdentity,RENEWED:.spec.renewTime
	echo
	echo "== What the operator created"
	local backups pods
	backups=$(k get backups -n "$DEMO_NS" -l mysql.cloudnative-mysql.io/scheduled-backup -o name)
	pods=$(k get pods -n "$DEMO_NS" -l mysql.cloudnative-mysql.io/cluster -o name)
	if [ -n "$backups" ]; then echo "Backups created by ScheduledBackups:"; echo "$backups"
	else echo "Scheduled Backups: none yet (see the Events below and the operator log)"; fi
	if [ -n "$pods" ]; then
		echo "Instance Pods, PVCs, Services and Secrets:"
		k get pods,pvc,services,secrets -n "$DEMO_NS" -l mysql.cloudnative-mysql.io/cluster -o wide 2>/dev/null || true
		if [ -z "$(k get nodes -o name)" ]; then
			echo "(This demo's control plane has no node, so instance Pods stay Pending and the Cluster controller"
			echo " adds the next instance only when the previous one is ready: \`make demo\` runs them on a real node.)"
		fi
	else echo "Instances: none yet (see the Events below and the operator log)"; fi
	if [ -z "$(k get backups -n "$DEMO_NS" -o jsonpath='{.items[*].status.phase}')" ]; then
		echo "Backup phases: none yet (see the Events below and the operator log)"
	fi
	echo
	echo "== Events in $DEMO_NS"
	k get events -n "$DEMO_NS" --sort-by=.lastTimestamp 2>/dev/null | tail -n 20 || true
	echo
	echo "Look around:  export KUBECONFIG=$KUBECONFIG_FILE; $KUBECTL get all,clusters,backups -n $DEMO_NS"
	echo "Operator log: $DEMO_DIR/operator.log"
	echo "Tear down:    bash hack/demo.sh down"
}

case "${1:-run}" in
run)
	trap 'down' EXIT
	up
	if [ "${DEMO_KEEP:-}" = 1 ]; then trap - EXIT; log "left running (DEMO_KEEP=1)"; exit 0; fi
	if [ -t 0 ]; then read -r -p "Press Enter to tear the demo down... " _; fi
	;;
up) up ;;
show) show ;;
down) down ;;
*) die "usage: $0 [run|up|show|down]" ;;
esac
