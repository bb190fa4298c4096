#!/usr/bin/env bash
# demo-node.sh is `make demo` on a real node: it brings the local cluster up (hack/localcluster.sh),
# installs the operator from config/default as a user would, starts the local S3 server on the
# node, creates a three-instance Cluster with an object store and a ScheduledBackup, waits, and
# prints the objects, the primary, the replicas and the first backup, then deletes the primary's Pod
# and shows a replica promoted, then changes the Cluster's Pod annotations (spec.podMetadata) and
# shows the rolling update move the primary by itself. What does not happen within
# its wait is printed as not done, with where to look, never faked.
#   bash hack/demo-node.sh        up and run the demo (the cluster stays up to look around)
#   bash hack/demo-node.sh failover  delete the primary's Pod again and show the failover
#   bash hack/demo-node.sh update    change the Pod annotations and show the rolling update move the primary
#   bash hack/demo-node.sh down   stop the S3 server and the local cluster
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO_DIR=$CNM_CACHE/demo-node
DEMO_NS=demo
LC="$CNM_ROOT/hack/localcluster.sh"
NODE_NETNS=cnm-node
NODE_IP=172.30.255.2 # hack/localcluster.sh's node address, the Pods' route to node services
S3_PORT=9000
S3_ACCESS=demo-access-key
S3_SECRET=demo-secret-key-0123456789
VERSITYGW=$CNM_TOOLS_BIN/versitygw-$VERSITYGW_VERSION/versitygw
MYSQL_IMAGE=cloudnative-mysql/mysql:9.7

k() { "$CNM_K8S_BIN/kubectl" --kubeconfig "$(bash "$LC" kubeconfig)" "$@"; }

stop_s3() {
	local f=$DEMO_DIR/versitygw.pid pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

down() {
	stop_s3
	# The demo's object store goes with it: the next demo's Cluster is a new incarnation, and a
	# location belongs to one incarnation (it would find this one's backups and archive there and
	# refuse to write beside them, ObjectStoreInUse).
	rm -rf "$DEMO_DIR/s3"
	bash "$LC" down
}

wait_until() { # wait_until SECONDS COMMAND...: true once COMMAND succeeds, false at the deadline
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}

cluster_ready() { [ "$(k -n $DEMO_NS get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
backup_done() { k -n $DEMO_NS get backups -o jsonpath='{.items[*].status.phase}' | grep -qiE 'completed|failed'; }

rw_endpoints() { k -n $DEMO_NS get endpointslices -l kubernetes.io/service-name=demo-rw -o jsonpath='{range .items[*].endpoints[?(@.conditions.ready==true)]}{.targetRef.name} {end}'; }
backup_verified() { k -n $DEMO_NS get backups -o jsonpath='{.items[*].status.conditions[?(@.type=="Verified")].reason}' | grep -q .; }
archive_reported() { [ -n "$(k -n $DEMO_NS get cluster demo -o jsonpath='{.status.binlogArchive.recoverableTo}')" ]; }
current_primary() { k -n $DEMO_NS get cluster demo -o jsonpath='{.status.currentPrimary}'; }

# failover deletes the primary's Pod, as a lost node or a drain would, and shows a replica promoted:
# status.currentPrimary changes, the demo-rw Service follows, the Events say what the operator did.
failover() {
	local old new t0 rw
	echo "== failover: kubectl delete pod <primary>"
	old=$(current_primary)
	if [ -z "$old" ] || ! cluster_ready; then
		echo "no Ready Cluster with a primary: failover not shown"
		return 0
	fi
	echo "primary: $old; demo-rw routes to: $(rw_endpoints)"
	t0=$SECONDS
	k -n $DEMO_NS delete pod "$old" --wait=false
	primary_moved() { new=$(current_primary) && [ -n "$new" ] && [ "$new" != "$old" ]; }
	if wait_until 60 primary_moved; then
		new=$(current_primary)
		echo "replica $new promoted: status.currentPrimary $old -> $new after $((SECONDS - t0)) s"
	else
		echo "status.currentPrimary still $(current_primary) after 60 s: no replica promoted"
	fi
	rw_on_new() { [ "$(rw_endpoints)" = "$(current_primary) " ]; }
	wait_until 30 rw_on_new || true
	echo "demo-rw routes to: $(rw_endpoints) ($((SECONDS - t0)) s after the delete)"
	if wait_until 120 cluster_ready; then
		echo "Cluster Ready again after $((SECONDS - t0)) s; $old is back as a $(k -n $DEMO_NS get pod "$old" -o jsonpath='{.metadata.labels.mysql\.cloudnative-mysql\.io/role}' 2>/dev/null)"
	else
		echo "Cluster not Ready within 2 minutes of the delete"
	fi
	k -n $DEMO_NS get events --field-selector involvedObject.kind=Cluster --sort-by=.lastTimestamp \
		-o custom-columns='REASON:.reason,MESSAGE:.message' 2>/dev/null | grep -Ei 'REASON|failover|lease|promot|primary' | tail -n 12 || true
}

# update changes the Cluster's Pod annotations (spec.podMetadata: a change no Pod takes in place;
# CPU and memory are resized in place), as a person editing it would, and shows the unsupervised
# rolling update: both replicas replaced, then the operator switching over to an updated replica by
# itself and replacing the old primary.
update() {
	local old new t0 stamp
	echo "== rolling update: kubectl patch cluster demo (podMetadata.annotations)"
	old=$(current_primary)
	if [ -z "$old" ] || ! cluster_ready; then
		echo "no Ready Cluster with a primary: update not shown"
		return 0
	fi
	stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	t0=$SECONDS
	k -n $DEMO_NS patch cluster demo --type merge \
		-p "{\"spec\":{\"podMetadata\":{\"annotations\":{\"demo.cloudnative-mysql.io/updated-at\":\"$stamp\"}}}}" >/dev/null
	echo "primary: $old; podMetadata annotation demo.cloudnative-mysql.io/updated-at -> $stamp"
	primary_moved() { new=$(current_primary) && [ -n "$new" ] && [ "$new" != "$old" ]; }
	if wait_until 300 primary_moved; then
		echo "the operator switched over: status.currentPrimary $old -> $(current_primary) after $((SECONDS - t0)) s"
	else
		echo "status.currentPrimary still $(current_primary) after 5 minutes: $(k -n $DEMO_NS get cluster demo \
			-o jsonpath='{.status.conditions[?(@.type=="Progressing")].message}')"
	fi
	converged() { [ "$(k -n $DEMO_NS get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Progressing")].status}')" = False ] && cluster_ready; }
	if wait_until 180 converged; then
		echo "every instance runs the new spec, Cluster Ready, $((SECONDS - t0)) s after the patch"
	else
		echo "not converged within 3 more minutes"
	fi
	k -n $DEMO_NS get events --field-selector involvedObject.kind=Cluster --sort-by=.lastTimestamp \
		-o custom-columns='REASON:.reason,MESSAGE:.message' 2>/dev/null | grep -E 'REASON|InstanceUpdating|PrimaryUpdate|Switchover' | tail -n 8 || true
}

up() {
	local t0=$SECONDS
	bash "$LC" up
	bash "$CNM_ROOT/hack/substrate.sh" versitygw
	mkdir -p "$DEMO_DIR/s3/backups"

	log "installing the operator from config/default (kubectl apply --server-side -k)"
	k apply --server-side --force-conflicts -k "$CNM_ROOT/config/default" >/dev/null
	k -n cloudnative-mysql-system rollout status deploy/cloudnative-mysql-manager --timeout=180s >/dev/null
	log "operator running as a Pod ($((SECONDS - t0)) s)"

	# The S3 server runs on the node, where Pods reach it; it stops with `down`.
	if ! { [ -f "$DEMO_DIR/versitygw.pid" ] && kill -0 "$(cat "$DEMO_DIR/versitygw.pid")" 2>/dev/null; }; then
		setsid nsenter --net="/run/netns/$NODE_NETNS" -- "$VERSITYGW" --access "$S3_ACCESS" --secret "$S3_SECRET" \
			--port "$NODE_IP:$S3_PORT" posix "$DEMO_DIR/s3" >"$DEMO_DIR/versitygw.log" 2>&1 </dev/null &
		echo $! >"$DEMO_DIR/versitygw.pid"
	fi

	k create namespace $DEMO_NS --dry-run=client -o yaml | k apply -f - >/dev/null
	k -n $DEMO_NS apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Secret
metadata: {name: backup-store}
stringData: {ACCESS_KEY_ID: $S3_ACCESS, SECRET_ACCESS_KEY: $S3_SECRET}
---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: demo}
spec:
  instances: 3
  imageName: $MYSQL_IMAGE
  storage: {size: 1Gi}
  backup:
    verification: {everyBackups: 1}
    objectStore:
      bucket: backups
      path: demo
      endpoint: http://$NODE_IP:$S3_PORT
      allowInsecureEndpoint: true
      forcePathStyle: true
      credentials:
        accessKeyId: {name: backup-store, key: ACCESS_KEY_ID}
        secretAccessKey: {name: backup-store, key: SECRET_ACCESS_KEY}
---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: ScheduledBackup
metadata: {name: demo-daily}
spec:
  schedule: "0 0 2 * * *"
  cluster: {name: demo}
  immediate: true
  backupOwnerReference: self
  method: clone
  target: prefer-standby
EOF
	log "created Cluster demo (3 instances, $MYSQL_IMAGE) and ScheduledBackup demo-daily in namespace $DEMO_NS"

	if wait_until 300 cluster_ready; then
		log "Cluster demo Ready ($((SECONDS - t0)) s)"
	else
		log "Cluster demo: not Ready within 5 minutes (its conditions and Events: kubectl -n $DEMO_NS describe cluster demo)"
	fi
	if ! wait_until 180 backup_done; then
		log "first backup: not finished within 3 minutes (kubectl -n $DEMO_NS describe backups)"
	fi

	echo
	echo "== objects in namespace $DEMO_NS"
	k -n $DEMO_NS get clusters,scheduledbackups,backups,pods,pvc,services -o wide || true
	echo
	echo "== primary and replicas"
	local primary
	primary=$(k -n $DEMO_NS get cluster demo -o jsonpath='{.status.currentPrimary}')
	echo "primary:  ${primary:-not available yet}"
	echo "replicas: $(k -n $DEMO_NS get pods -l mysql.cloudnative-mysql.io/cluster=demo,mysql.cloudnative-mysql.io/role=replica -o jsonpath='{.items[*].metadata.name}')"
	echo
	echo "== first backup"
	k -n $DEMO_NS get backups -o custom-columns='NAME:.metadata.name,PHASE:.status.phase,INSTANCE:.status.instanceName,ID:.status.backupId,DESTINATION:.status.destinationPath' || true
	find "$DEMO_DIR/s3/backups" -type f 2>/dev/null | sed "s|$DEMO_DIR/s3/||" | head -n 10
	echo
	echo "== the first backup restored and checked in a throwaway Job (spec.backup.verification)"
	wait_until 120 backup_verified || log "verification: no result within 2 minutes (kubectl -n $DEMO_NS describe backups)"
	k -n $DEMO_NS get backups -o custom-columns='NAME:.metadata.name,VERIFIED:.status.conditions[?(@.type=="Verified")].reason,TABLES:.status.verification.tablesChecked,ROWS:.status.verification.rows' || true
	echo
	echo "== object store location and binlog archive (this Cluster's own)"
	wait_until 60 archive_reported || true
	k -n $DEMO_NS get cluster demo -o custom-columns='LOCATION:.status.objectStoreLocation.location,CLAIM:.status.objectStoreLocation.phase,ARCHIVE:.status.conditions[?(@.type=="BinlogArchiving")].reason,RECOVERABLE-FROM:.status.binlogArchive.recoverableFrom,RECOVERABLE-TO:.status.binlogArchive.recoverableTo' || true
	failover
	echo
	update

	echo
	echo "== kubectl cloudnative-mysql status demo (the plugin built in bin/)"
	KUBECONFIG=$(bash "$LC" kubeconfig) "$CNM_ROOT/bin/kubectl-cloudnative_mysql" -n $DEMO_NS status demo || true

	# root@localhost matches the local socket only, and its password is in the Secret demo-root: the
	# SQL commands run in the current primary's mysql container and keep the password off every
	# command line (it reaches mysql on stdin, then as MYSQL_PWD inside the container).
	cat <<EOF

Look around:
  export KUBECONFIG=$(bash "$LC" kubeconfig) PATH=$CNM_K8S_BIN:\$PATH
  kubectl -n $DEMO_NS get cluster demo -o yaml
  kubectl -n cloudnative-mysql-system logs deploy/cloudnative-mysql-manager
SQL as root on the current primary, over its local socket, with the password of the Secret demo-root:
  primary=\$(kubectl -n $DEMO_NS get cluster demo -o jsonpath='{.status.currentPrimary}')
  { kubectl -n $DEMO_NS get secret demo-root -o jsonpath='{.data.password}' | base64 -d; echo; echo 'SELECT @@hostname, @@read_only'; } |
    kubectl -n $DEMO_NS exec -i "\$primary" -c mysql -- sh -c 'IFS= read -r MYSQL_PWD && export MYSQL_PWD && exec mysql -uroot -S /controller/run/mysqld.sock -t'
An interactive session asks for the password: print it with the first command, paste it at the prompt.
  kubectl -n $DEMO_NS get secret demo-root -o jsonpath='{.data.password}' | base64 -d; echo
  kubectl -n $DEMO_NS exec -it "\$primary" -c mysql -- mysql -uroot -p -S /controller/run/mysqld.sock
Tear down:
  bash hack/demo-node.sh down
EOF
}

case "${1:-up}" in
up) up ;;
failover) failover ;;
update) update ;;
down) down ;;
*) die "usage: $0 [up|failover|update|down]" ;;
esac
