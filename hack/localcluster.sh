#!/usr/bin/env bash
# localcluster.sh runs a real single-node Kubernetes on this machine:
#   up          build (cached) and start etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
#               containerd, kubelet and kube-proxy; import the local images; wait for the Node Ready
#   down        stop everything by PID and remove what up created (network namespace, mounts, cgroups)
#   status      print the processes and the Node
#   kubeconfig  print the path of the admin kubeconfig
#   images      (re)build and import the images (pause, operator, mysql) into the running node
#   next-operator  build and import $OPERATOR_NEXT_IMAGE: the same tree built as version "next",
#               what an operator upgrade moves to (test/chaos operator-upgrade)
#
# The whole node lives in its own network namespace ($NODE_NETNS), joined to the host by one veth
# pair: every port, route, sysctl and iptables rule of the node and its Pods stays in there, the host
# only sees the veth's address. Pods have no route off the machine. Run as root; state lives under
# $LC_DIR, caches under $CNM_CACHE, nothing in the repository.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LC_DIR=$CNM_CACHE/localcluster
NODE_NAME=cnm-node
NODE_NETNS=cnm-node
HOST_VETH=cnm-host
HOST_IP=172.30.255.1
NODE_IP=172.30.255.2
POD_SUBNET=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
API_SERVICE_IP=10.96.0.1
DNS_SERVICE_IP=10.96.0.10
API_PORT=6443
KUBECONFIG_FILE=$LC_DIR/kubeconfig
CTR_SOCK=$LC_DIR/containerd/containerd.sock
IMAGES_DIR=$CNM_CACHE/images
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns volume-modes)

PAUSE_IMAGE=docker.io/cloudnative-mysql/pause:dev
OPERATOR_IMAGE=cloudnative-mysql/operator:dev
OPERATOR_NEXT_IMAGE=cloudnative-mysql/operator:next
MYSQL_IMAGE=cloudnative-mysql/mysql:9.7
# VOLUME_GID owns the node's volumes: the fsGroup of instance Pods (specs.MySQLGID), the group
# of the MySQL image's mysql user.
VOLUME_GID=999

k() { "$CNM_K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
in_node() { nsenter --net="/run/netns/$NODE_NETNS" -- "$@"; }
MNTNS=$LC_DIR/ns/mnt
# The kernel tunables the kubelet sets at start (vm.overcommit_memory, kernel.panic, ...) are not
# namespaced: in the node's mount namespace each is a bind-mounted copy, so the host keeps its own.
KUBELET_SYSCTLS=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes)
ctr_node() { ctr --address "$CTR_SOCK" -n k8s.io "$@"; }

pid_of() { cat "$LC_DIR/pids/$1.pid" 2>/dev/null || true; }
running() {
	local pid
	pid=$(pid_of "$1")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# start NAME BIN ARGS...: runs BIN in the node's network and mount namespaces, in its own session,
# logging to $LC_DIR/logs/NAME.log; the PID is the component's own (setsid and nsenter exec).
start() {
	local name=$1
	shift
	if running "$name"; then return 0; fi
	setsid nsenter --net="/run/netns/$NODE_NETNS" --mount="$MNTNS" -- "$@" >>"$LC_DIR/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$LC_DIR/pids/$name.pid"
}

wait_for() { # wait_for SECONDS DESCRIPTION COMPONENT COMMAND...: fails early if COMPONENT died
	local secs=$1 what=$2 comp=$3
	shift 3
	local end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ]; do
		"$@" >/dev/null 2>&1 && return 0
		if [ -n "$comp" ] && ! running "$comp"; then
			tail -n 30 "$LC_DIR/logs/$comp.log" >&2
			die "$comp exited while waiting for $what (log: $LC_DIR/logs/$comp.log)"
		fi
		sleep 0.2
	done
	die "timed out waiting for $what"
}

stop_pid() { # stop_pid PID [SECONDS]: TERM, wait, then KILL
	local pid=$1 secs=${2:-10}
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 $((secs * 10))); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

# ---------------------------------------------------------------------------------------------
# Builds

build_components() {
	apt_install containerd runc containernetworking-plugins iptables conntrack iproute2 openssl curl util-linux
	bash "$CNM_ROOT/hack/substrate.sh" kube
	for c in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
		[ -x "$CNM_K8S_BIN/$c" ] || die "$c missing in $CNM_K8S_BIN"
	done
	# The cluster DNS: CoreDNS with the kubernetes plugin, from its own tools module.
	local want
	want=$(tree_hash "$CNM_ROOT/hack/tools/coredns")
	if [ "$(cat "$CNM_K8S_BIN/.stamp-coredns" 2>/dev/null)" != "$want" ] || [ ! -x "$CNM_K8S_BIN/coredns" ]; then
		log "building coredns (cold: minutes)"
		(cd "$CNM_ROOT/hack/tools/coredns" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$CNM_K8S_BIN/coredns" .)
		echo "$want" >"$CNM_K8S_BIN/.stamp-coredns"
	fi
}

# build_images packs the pause, operator and (if the MySQL root filesystem is built) MySQL images
# as docker-archive tarballs under $IMAGES_DIR. Each is redone only when its inputs changed.
build_images() {
	mkdir -p "$IMAGES_DIR"
	local imgpack=$IMAGES_DIR/imgpack want
	want=$(tree_hash "$CNM_ROOT/hack/tools/images")
	if [ "$(cat "$IMAGES_DIR/.stamp-imgpack" 2>/dev/null)" != "$want" ] || [ ! -x "$imgpack" ]; then
		(cd "$CNM_ROOT/hack/tools/images" && CGO_ENABLED=0 go build -trimpath -o "$imgpack" .)
		echo "$want" >"$IMAGES_DIR/.stamp-imgpack"
		rm -f "$IMAGES_DIR"/.stamp-*.tar
	fi

	want=$(tree_hash "$CNM_ROOT/hack/images/pause")
	if [ "$(cat "$IMAGES_DIR/.stamp-pause.tar" 2>/dev/null)" != "$want" ]; then
		log "building the pause image"
		(cd "$CNM_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$IMAGES_DIR/pause" ./hack/images/pause)
		"$imgpack" -ref "$PAUSE_IMAGE" -out "$IMAGES_DIR/pause.tar" -add "$IMAGES_DIR/pause:/pause" \
			-entrypoint /pause -user 65535 >/dev/null
		echo "$want" >"$IMAGES_DIR/.stamp-pause.tar"
	fi

	want=$(cd "$CNM_ROOT" && tree_hash cmd internal api go.mod go.sum)
	if [ "$(cat "$IMAGES_DIR/.stamp-operator.tar" 2>/dev/null)" != "$want" ]; then
		log "building the operator image (the manager binary)"
		(cd "$CNM_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$IMAGES_DIR/manager" ./cmd/manager)
		"$imgpack" -ref "$OPERATOR_IMAGE" -out "$IMAGES_DIR/operator.tar" -add "$IMAGES_DIR/manager:/manager" \
			-entrypoint /manager -user 65532 >/dev/null
		echo "$want" >"$IMAGES_DIR/.stamp-operator.tar"
	fi

	if [ -f "$CNM_MYSQL_ROOTFS/.complete" ]; then
		want="rootfs-v$MYSQL_ROOTFS_VERSION-3"
		if [ "$(cat "$IMAGES_DIR/.stamp-mysql.tar" 2>/dev/null)" != "$want" ]; then
			log "building the MySQL image from $CNM_MYSQL_ROOTFS (a minute)"
			mysql_image_extra "$IMAGES_DIR/mysql-extra"
			"$imgpack" -ref "$MYSQL_IMAGE" -out "$IMAGES_DIR/mysql.tar" -add "$IMAGES_DIR/mysql-extra:/" "${MYSQL_IMAGE_LAYOUT[@]}" >/dev/null
			echo "$want" >"$IMAGES_DIR/.stamp-mysql.tar"
		fi
	else
		log "no MySQL root filesystem (bash hack/substrate.sh mysql): skipping the MySQL image"
	fi
}

# build_next_operator packs the operator image an upgrade moves to: the same sources, built with
# another version stamp, so its binary and its digest differ from $OPERATOR_IMAGE's. Built only on
# demand (the operator-upgrade fault), cached by the tree's hash like the others.
build_next_operator() {
	build_images
	local want
	want=$(cd "$CNM_ROOT" && tree_hash cmd internal api go.mod go.sum)
	if [ "$(cat "$IMAGES_DIR/.stamp-operator-next.tar" 2>/dev/null)" != "$want" ]; then
		log "building the next operator image (the manager binary, version next)"
		(cd "$CNM_ROOT" && CGO_ENABLED=0 go build -trimpath \
			-ldflags '-s -w -X github.com/cloudnative-mysql/cloudnative-mysql/internal/version.Version=next' \
			-o "$IMAGES_DIR/manager-next" ./cmd/manager)
		"$IMAGES_DIR/imgpack" -ref "$OPERATOR_NEXT_IMAGE" -out "$IMAGES_DIR/operator-next.tar" \
			-add "$IMAGES_DIR/manager-next:/manager" -entrypoint /manager -user 65532 >/dev/null
		echo "$want" >"$IMAGES_DIR/.stamp-operator-next.tar"
	fi
}

# import_images loads every image tarball whose digest the node does not have yet.
import_images() {
	local t
	for t in pause operator mysql operator-next; do
		[ -f "$IMAGES_DIR/$t.tar" ] || continue
		local sum
		sum=$(sha256sum "$IMAGES_DIR/$t.tar" | cut -c1-16)
		[ "$(cat "$LC_DIR/imported-$t" 2>/dev/null)" = "$sum" ] && continue
		log "importing the $t image"
		ctr_node images import "$IMAGES_DIR/$t.tar" >/dev/null
		echo "$sum" >"$LC_DIR/imported-$t"
	done
}

# ---------------------------------------------------------------------------------------------
# PKI and configuration

cert() { # cert NAME CN O [SANS]: a key and a certificate signed by the cluster CA
	local name=$1 cn=$2 o=$3 sans=${4:-} pki=$LC_DIR/pki
	[ -s "$pki/$name.crt" ] && return 0
	openssl genrsa -out "$pki/$name.key" 2048 2>/dev/null
	local subj="/CN=$cn"
	[ -n "$o" ] && subj="/O=$o$subj"
	openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		if [ -n "$sans" ]; then
			echo "extendedKeyUsage=serverAuth,clientAuth"
			echo "subjectAltName=$sans"
		else
			echo "extendedKeyUsage=clientAuth"
		fi
	} >"$pki/$name.ext"
	openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
		-days 3650 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
	rm -f "$pki/$name.csr" "$pki/$name.ext"
}

kubeconfig() { # kubeconfig FILE CERTNAME
	local file=$1 name=$2 pki=$LC_DIR/pki
	cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $name
  user:
    client-certificate: $pki/$name.crt
    client-key: $pki/$name.key
contexts:
- name: local
  context: {cluster: local, user: $name}
current-context: local
EOF
}

gen_pki() {
	local pki=$LC_DIR/pki
	mkdir -p "$pki"
	if [ ! -s "$pki/ca.crt" ]; then
		openssl genrsa -out "$pki/ca.key" 2048 2>/dev/null
		openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=cloudnative-mysql-local-ca" -days 3650 \
			-sha256 -out "$pki/ca.crt" 2>/dev/null
	fi
	if [ ! -s "$pki/sa.key" ]; then
		openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
		openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
	fi
	cert apiserver kube-apiserver "" "IP:$NODE_IP,IP:127.0.0.1,IP:$API_SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
	cert admin cnm-admin system:masters
	cert controller-manager system:kube-controller-manager ""
	cert scheduler system:kube-scheduler ""
	cert kube-proxy system:kube-proxy ""
	cert kubelet "system:node:$NODE_NAME" system:nodes
	cert coredns system:coredns ""
	cert kubelet-serving "system:node:$NODE_NAME" system:nodes "IP:$NODE_IP,DNS:$NODE_NAME"
	kubeconfig "$KUBECONFIG_FILE" admin
	kubeconfig "$LC_DIR/controller-manager.kubeconfig" controller-manager
	kubeconfig "$LC_DIR/scheduler.kubeconfig" scheduler
	kubeconfig "$LC_DIR/kube-proxy.kubeconfig" kube-proxy
	kubeconfig "$LC_DIR/kubelet.kubeconfig" kubelet
	kubeconfig "$LC_DIR/coredns.kubeconfig" coredns
}

# put FILE writes stdin to FILE only when it differs: kube-proxy exits when its configuration
# file is written to, and an up on a running node must leave it alone.
put() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX")
	cat >"$tmp"
	if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

write_configs() {
	local d=$LC_DIR
	mkdir -p "$d/containerd/root" "$d/containerd/state" "$d/containerd/opt" "$d/cni/net.d" "$d/cni/ipam" \
		"$d/kubelet" "$d/pod-logs"
	put "$d/containerd/config.toml" <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$CTR_SOCK"
[ttrpc]
  address = "$CTR_SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The sandbox lacks CAP_SYS_RESOURCE: without this runc fails every sandbox writing oom_score_adj.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
EOF
	# Pods on one bridge inside the node's namespace; no masquerade, no route off the machine.
	put "$d/cni/net.d/10-cnm.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "cnm",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cnm0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$d/cni/ipam",
        "ranges": [[{"subnet": "$POD_SUBNET"}]],
        "routes": [{"dst": "$SERVICE_CIDR"}, {"dst": "$NODE_IP/32"}]
      }
    }
  ]
}
EOF
	printf 'nameserver %s\nsearch svc.cluster.local cluster.local\noptions ndots:5\n' "$DNS_SERVICE_IP" | put "$d/resolv.conf"
	put "$d/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $d/pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $d/pki/kubelet-serving.crt
tlsPrivateKeyFile: $d/pki/kubelet-serving.key
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$CTR_SOCK
clusterDomain: cluster.local
clusterDNS: [$DNS_SERVICE_IP]
resolvConf: $d/resolv.conf
podLogsDir: $d/pod-logs
volumePluginDir: $d/kubelet/volume-plugins
# imported images are never pulled again: never collect them
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
serializeImagePulls: false
EOF
	put "$d/kube-proxy-config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $d/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: $POD_SUBNET
# Service traffic between Pods on one bridge comes back through the node only when masqueraded
# (to the bridge's address, inside the node's namespace).
iptables: {masqueradeAll: true}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

# The cluster DNS runs as a node process on $NODE_IP:53; the kube-dns Service ($DNS_SERVICE_IP)
# points at it through a selector-less EndpointSlice. Names outside the cluster do not resolve.
write_coredns() {
	put "$LC_DIR/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $LC_DIR/coredns.kubeconfig local
        pods insecure
    }
    cache 30
}
EOF
}

apply_dns_objects() {
	k apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:coredns"}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  clusterIP: $DNS_SERVICE_IP
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-node
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: localcluster}
addressType: IPv4
endpoints:
- addresses: ["$NODE_IP"]
  conditions: {ready: true}
ports:
- {name: dns, port: 53, protocol: UDP}
- {name: dns-tcp, port: 53, protocol: TCP}
EOF
}

# ---------------------------------------------------------------------------------------------
# Network namespace

setup_netns() {
	if [ ! -e "/run/netns/$NODE_NETNS" ]; then
		ip netns add "$NODE_NETNS"
	fi
	if ! ip link show "$HOST_VETH" >/dev/null 2>&1; then
		ip link add "$HOST_VETH" type veth peer name eth0 netns "$NODE_NETNS"
		ip addr add "$HOST_IP/30" dev "$HOST_VETH"
		ip link set "$HOST_VETH" up
	fi
	ip -n "$NODE_NETNS" link set lo up
	ip -n "$NODE_NETNS" addr replace "$NODE_IP/30" dev eth0
	ip -n "$NODE_NETNS" link set eth0 up
	# The node's own connections to Services (apiserver webhooks, probes) need a route for the
	# service range; kube-proxy's DNAT then sends them where they belong. Nothing routes further.
	ip -n "$NODE_NETNS" route replace "$SERVICE_CIDR" dev eth0
	in_node sysctl -qw net.ipv4.ip_forward=1
	in_node sysctl -qw net.ipv4.conf.all.route_localnet=1 2>/dev/null || true
}

# setup_mntns creates the node's private mount namespace, kept by a bind mount of its nsfs file:
# the kubelet's volume mounts, containerd's rootfs and netns mounts live in there and disappear with
# it, and the kubelet's kernel tunables are written to copies.
setup_mntns() {
	grep -qF " $MNTNS " /proc/self/mountinfo && return 0
	mkdir -p "$LC_DIR/ns" "$LC_DIR/sysctl"
	if ! grep -qF " $LC_DIR/ns " /proc/self/mountinfo; then
		mount --bind "$LC_DIR/ns" "$LC_DIR/ns"
		mount --make-private "$LC_DIR/ns"
	fi
	touch "$MNTNS"
	local script="" f
	for f in "${KUBELET_SYSCTLS[@]}"; do
		[ -e "/proc/sys/$f" ] || continue
		cp "/proc/sys/$f" "$LC_DIR/sysctl/${f//\//.}"
		script+="mount --bind '$LC_DIR/sysctl/${f//\//.}' '/proc/sys/$f' && "
	done
	unshare --mount="$MNTNS" --propagation private -- sh -c "${script}true"
}

# ---------------------------------------------------------------------------------------------
# up / down / status

up() {
	[ "$(id -u)" = 0 ] || die "run as root"
	local t0=$SECONDS
	build_components
	build_images
	mkdir -p "$LC_DIR/pids" "$LC_DIR/logs" "$LC_DIR/etcd"
	gen_pki
	write_configs
	write_coredns
	setup_netns
	setup_mntns
	[ -d /var/lib/cni ] || { mkdir -p /var/lib/cni && touch "$LC_DIR/created-var-lib-cni"; }
	mkdir -p /tmp/hostpath_pv
	[ -d /var/log/containers ] || { mkdir -p /var/log/containers && touch "$LC_DIR/created-var-log-containers"; }
	local t_start=$SECONDS
	local pki=$LC_DIR/pki B=$CNM_K8S_BIN

	start etcd "$B/etcd" --name "$NODE_NAME" --data-dir "$LC_DIR/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster "$NODE_NAME=http://127.0.0.1:2380" --unsafe-no-fsync
	start containerd containerd --config "$LC_DIR/containerd/config.toml"
	start kube-apiserver "$B/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
		--bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
		--client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types InternalIP,Hostname \
		--service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC --allow-privileged=true \
		--enable-priority-and-fairness=false --profiling=false
	wait_for 60 "the API server's /readyz" kube-apiserver k get --raw /readyz
	log "API server ready ($((SECONDS - t_start)) s)"
	apply_dns_objects
	start coredns "$B/coredns" -conf "$LC_DIR/Corefile"
	start kube-controller-manager "$B/kube-controller-manager" --kubeconfig "$LC_DIR/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$LC_DIR/controller-manager.kubeconfig" \
		--authorization-kubeconfig "$LC_DIR/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
		--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
		--cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
		--service-cluster-ip-range "$SERVICE_CIDR" --profiling=false --enable-hostpath-provisioner
	# A Pod created with its PVC is first refused for "unbound immediate PersistentVolumeClaims"
	# (the host-path class binds on creation); the scheduler sometimes misses the claim's binding
	# and leaves the Pod unschedulable until it retries every unschedulable Pod (5 min by default;
	# kubernetes/kubernetes#87145, #125762). Retried after 30 s here, so a test waits seconds.
	start kube-scheduler "$B/kube-scheduler" --kubeconfig "$LC_DIR/scheduler.kubeconfig" \
		--authentication-kubeconfig "$LC_DIR/scheduler.kubeconfig" \
		--authorization-kubeconfig "$LC_DIR/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false --profiling=false \
		--pod-max-in-unschedulable-pods-duration 30s
	wait_for 30 "containerd" containerd test -S "$CTR_SOCK"
	import_images
	start kubelet "$B/kubelet" --config "$LC_DIR/kubelet-config.yaml" --kubeconfig "$LC_DIR/kubelet.kubeconfig" \
		--root-dir "$LC_DIR/kubelet" --cert-dir "$LC_DIR/kubelet/pki" --node-ip "$NODE_IP" \
		--hostname-override "$NODE_NAME"
	start kube-proxy "$B/kube-proxy" --config "$LC_DIR/kube-proxy-config.yaml"
	# The hostPath provisioner makes each volume directory 0750 root and the kubelet applies no
	# fsGroup to hostPath volumes, so a non-root container could not write its PVC. Give each new
	# volume directory what the kubelet's fsGroup gives a volume that supports it: group
	# $VOLUME_GID (the instance Pods' fsGroup), group-writable, setgid, nothing for others.
	start volume-modes bash -c "while sleep 0.5; do find /tmp/hostpath_pv -mindepth 1 -maxdepth 1 -type d \\( ! -group $VOLUME_GID -o ! -perm 2770 \\) -exec chgrp $VOLUME_GID {} + -exec chmod 2770 {} + 2>/dev/null; done"
	wait_for 120 "the Node Ready" kubelet node_ready
	log "node $NODE_NAME Ready ($((SECONDS - t_start)) s after start, $((SECONDS - t0)) s in all)"
	wait_for 60 "the default ServiceAccount" "" k get serviceaccount default -n default
	# PVCs: the controller manager's test-only hostPath provisioner (directories under
	# /tmp/hostpath_pv, deleted with their PVs; down removes what is left).
	k apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
	log "kubectl: KUBECONFIG=$KUBECONFIG_FILE $CNM_K8S_BIN/kubectl get nodes"
}

node_ready() {
	[ "$(k get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# shim_pids prints the containerd shims serving this node's containerd (they outlive it).
shim_pids() {
	local p
	for p in /proc/[0-9]*; do
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "-address $CTR_SOCK " && echo "${p#/proc/}"
	done
	return 0
}

# cgroup_pids prints every process in the kubelet's Pod cgroups.
cgroup_pids() {
	find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

down() {
	[ "$(id -u)" = 0 ] || die "run as root"
	local c pid
	# Stop the kubelet first so it restarts nothing, then the containers, then the rest.
	for c in kube-proxy kubelet; do
		pid=$(pid_of "$c")
		[ -n "$pid" ] && stop_pid "$pid" 10
		rm -f "$LC_DIR/pids/$c.pid"
	done
	if [ -S "$CTR_SOCK" ] && running containerd; then
		local ids
		ids=$(ctr_node tasks ls -q 2>/dev/null || true)
		for id in $ids; do ctr_node tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; done
		sleep 0.5
		for id in $ids; do ctr_node tasks delete -f "$id" >/dev/null 2>&1 || true; done
		# Containers and their snapshots go too; the imported images stay in containerd's root.
		for id in $(ctr_node containers ls -q 2>/dev/null || true); do
			ctr_node containers delete "$id" >/dev/null 2>&1 || true
		done
	fi
	for pid in $(cgroup_pids); do kill -KILL "$pid" 2>/dev/null || true; done
	for c in volume-modes coredns kube-scheduler kube-controller-manager kube-apiserver containerd etcd; do
		pid=$(pid_of "$c")
		[ -n "$pid" ] && stop_pid "$pid" 10
		rm -f "$LC_DIR/pids/$c.pid"
	done
	for pid in $(shim_pids); do stop_pid "$pid" 3; done
	# The node's mount namespace takes the kubelet's and containerd's mounts with it once its
	# processes are gone; then anything else under the state directory.
	umount "$MNTNS" 2>/dev/null || true
	local m
	for _ in 1 2 3; do
		m=$(awk -v d="$LC_DIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r)
		[ -z "$m" ] && break
		for x in $m; do umount "$x" 2>/dev/null || umount -l "$x" 2>/dev/null || true; done
	done
	# Pod cgroups the kubelet created (deepest first).
	find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} \; 2>/dev/null || true
	# The node's network namespace takes its veth, bridge, routes and iptables rules with it.
	if [ -e "/run/netns/$NODE_NETNS" ]; then ip netns delete "$NODE_NETNS"; fi
	ip link show "$HOST_VETH" >/dev/null 2>&1 && ip link delete "$HOST_VETH"
	# Fixed host paths the kubelet and CNI write to.
	find /var/log/containers -maxdepth 1 -type l -lname "$LC_DIR/*" -delete 2>/dev/null || true
	if [ -f "$LC_DIR/created-var-log-containers" ]; then
		rmdir /var/log/containers 2>/dev/null || true
		rm -f "$LC_DIR/created-var-log-containers"
	fi
	# The test provisioner's fixed directory holds only this node's volumes.
	rm -rf /tmp/hostpath_pv
	rm -f "$LC_DIR/created-hostpath-pv"
	if [ -f "$LC_DIR/created-var-lib-cni" ]; then
		rm -rf /var/lib/cni
		rm -f "$LC_DIR/created-var-lib-cni"
	fi
	# Runtime state goes; PKI, images and the build caches stay for the next up.
	rm -rf "$LC_DIR/etcd" "$LC_DIR/kubelet" "$LC_DIR/containerd/state" "$LC_DIR/pod-logs" \
		"$LC_DIR/cni/ipam" "$LC_DIR"/imported-*
	check_clean
	log "local cluster stopped"
}

# check_clean fails if anything up created is still there.
check_clean() {
	local bad=0 c
	for c in "${COMPONENTS[@]}"; do
		running "$c" && { log "still running: $c"; bad=1; }
	done
	[ -n "$(shim_pids)" ] && { log "still running: containerd shims $(shim_pids | tr '\n' ' ')"; bad=1; }
	[ -n "$(cgroup_pids)" ] && { log "still running in Pod cgroups: $(cgroup_pids | tr '\n' ' ')"; bad=1; }
	grep -qF " $LC_DIR/" /proc/self/mountinfo && { log "still mounted under $LC_DIR"; bad=1; }
	[ -e "/run/netns/$NODE_NETNS" ] && { log "network namespace $NODE_NETNS still there"; bad=1; }
	ip link show "$HOST_VETH" >/dev/null 2>&1 && { log "veth $HOST_VETH still there"; bad=1; }
	compgen -G '/sys/fs/cgroup/*/kubepods' >/dev/null && { log "Pod cgroups still there"; bad=1; }
	[ $bad = 0 ] || die "down left things behind"
}

status() {
	local c
	for c in "${COMPONENTS[@]}"; do
		if running "$c"; then
			printf '%-24s running  pid %-7s rss %s MiB\n' "$c" "$(pid_of "$c")" \
				$(($(awk '/VmRSS/ {print $2}' "/proc/$(pid_of "$c")/status") / 1024))
		else
			printf '%-24s stopped\n' "$c"
		fi
	done
	if running kube-apiserver; then k get nodes -o wide; fi
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
kubeconfig) echo "$KUBECONFIG_FILE" ;;
images)
	build_images
	import_images
	;;
next-operator)
	build_next_operator
	import_images
	;;
*) die "usage: $0 up|down|status|kubeconfig|images|next-operator" ;;
esac
