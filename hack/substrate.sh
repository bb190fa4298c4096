#!/usr/bin/env bash
# substrate.sh builds and caches the real components the tests run against:
#   kube      kube-apiserver, kube-controller-manager, kubectl and etcd, built from the Go module proxy
#   versitygw the S3-compatible server the object-store tests start on 127.0.0.1
#   helm      the Helm client the chart's tests (test/helm, the e2e install tests) run
#   mysql     a Debian sid minbase root filesystem with MySQL 9.7 (mysql-server-core, mysql-client-core)
#   prometheus  Debian's prometheus package (prometheus, promtool) unpacked into the cache, not installed
#   all       all of the above (the default)
#   env       print the environment variables that point the tests at the cache
# Idempotent: a component whose sources did not change is not rebuilt. Run as root on a fresh machine.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

k8s_ldflags() {
	local minor=${K8S_VERSION#v1.}
	minor=${minor%%.*}
	local flags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
		flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	printf '%s' "$flags"
}

# build_go_tool builds the mains of one tools module into $CNM_K8S_BIN unless its stamp is current.
build_go_tool() {
	local name=$1 module=$2 pkgs=$3 want
	want=$(tree_hash "$CNM_ROOT/hack/tools/$module")
	if [ "$(cat "$CNM_K8S_BIN/.stamp-$name" 2>/dev/null)" = "$want" ]; then
		return 0
	fi
	log "building $name (cold: minutes; cached afterwards under $CNM_K8S_BIN)"
	mkdir -p "$CNM_K8S_BIN"
	(cd "$CNM_ROOT/hack/tools/$module" &&
		CGO_ENABLED=0 go build -trimpath -ldflags "$(k8s_ldflags)" -o "$CNM_K8S_BIN/" $pkgs)
	echo "$want" >"$CNM_K8S_BIN/.stamp-$name"
}

build_kube() {
	build_go_tool etcd etcd .
	build_go_tool kubectl kubectl .
	build_go_tool kube kube ./cmd/...
	# the build writes the etcd and kubectl mains under their module names
	[ -x "$CNM_K8S_BIN/etcd" ] && [ -x "$CNM_K8S_BIN/kubectl" ] || die "etcd or kubectl missing in $CNM_K8S_BIN"
}

build_versitygw() {
	local dir=$CNM_TOOLS_BIN/versitygw-$VERSITYGW_VERSION
	[ -x "$dir/versitygw" ] && return 0
	log "building versitygw $VERSITYGW_VERSION"
	mkdir -p "$dir"
	CGO_ENABLED=0 GOBIN="$dir" go install -trimpath "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
}

# build_helm builds the Helm client with go install into its own versioned directory, once, with
# the link-time variables of Helm's own release build: its version, and the Kubernetes version that
# `helm template` and `helm lint` assume (that of its client-go, HELM_K8S_MINOR).
build_helm() {
	local dir=$CNM_TOOLS_BIN/helm-$HELM_VERSION flags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
	[ -x "$dir/helm" ] && return 0
	log "building helm $HELM_VERSION"
	mkdir -p "$dir"
	for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
		flags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$HELM_K8S_MINOR"
	done
	CGO_ENABLED=0 GOBIN="$dir" go install -trimpath -ldflags "$flags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

build_mysql_rootfs() {
	local dir=$CNM_MYSQL_ROOTFS
	[ -f "$dir/.complete" ] && return 0
	apt_install debootstrap debian-archive-keyring
	local mirror tmp
	mirror=$(debian_mirror)
	tmp="$dir.tmp.$$"
	rm -rf "$tmp" && mkdir -p "$tmp"
	log "debootstrapping Debian sid with MySQL into $dir (about a minute)"
	if ! debootstrap --variant=minbase --include=mysql-server-core,mysql-client-core \
		sid "$tmp" "$mirror" >"$tmp.log" 2>&1; then
		tail -n 30 "$tmp.log" >&2
		rm -rf "$tmp"
		die "debootstrap failed (full log: $tmp.log)"
	fi
	rm -f "$tmp.log"
	# Trim what tests never read; keep the server, the client and their libraries.
	rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/usr/share/doc "$tmp"/usr/share/man
	chroot "$tmp" /usr/sbin/mysqld --version >"$tmp/.mysqld-version"
	rm -rf "$dir" && mv "$tmp" "$dir"
	touch "$dir/.complete"
	log "MySQL root filesystem ready: $(cat "$dir/.mysqld-version")"
}

# fetch_prometheus unpacks the prometheus Debian package of this machine's apt sources (the server
# and promtool, Go programs needing only libc) into $CNM_PROMETHEUS_DIR with dpkg-deb, without
# installing it: promtool checks and unit-tests the alert rules, the server is what an end-to-end
# test scrapes the instances with.
fetch_prometheus() {
	local dir=$CNM_PROMETHEUS_DIR
	[ -f "$dir/.complete" ] && return 0
	local tmp="$dir.tmp.$$" deb
	rm -rf "$tmp" && mkdir -p "$tmp/download"
	if ! apt-cache show prometheus >/dev/null 2>&1; then
		[ "$(id -u)" = 0 ] || die "no apt lists know the prometheus package: run apt-get update as root"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
	fi
	log "downloading Debian's prometheus package into $dir"
	# apt's download sandbox user cannot enter a cache under root's home: root downloads itself.
	local sandbox=()
	[ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
	(cd "$tmp/download" && apt-get "${sandbox[@]}" download -qq prometheus) ||
		{ rm -rf "$tmp"; die "apt-get download prometheus failed"; }
	deb=$(ls "$tmp"/download/prometheus_*.deb)
	dpkg-deb -x "$deb" "$tmp"
	dpkg-deb -f "$deb" Version >"$tmp/.version"
	rm -rf "$tmp/download" "$tmp/usr/share/doc" "$tmp/usr/share/man"
	local bin
	for bin in promtool prometheus; do
		"$tmp/usr/bin/$bin" --version >/dev/null 2>&1 || { rm -rf "$tmp"; die "the unpacked $bin does not run"; }
	done
	rm -rf "$dir" && mv "$tmp" "$dir"
	touch "$dir/.complete"
	log "prometheus $(cat "$dir/.version") ready: $dir/usr/bin/{prometheus,promtool}"
}

print_env() {
	echo "export KUBEBUILDER_ASSETS=$CNM_K8S_BIN"
	echo "export CNM_K8S_BIN=$CNM_K8S_BIN"
	echo "export CNM_MYSQL_ROOTFS=$CNM_MYSQL_ROOTFS"
	echo "export CNM_VERSITYGW=$CNM_TOOLS_BIN/versitygw-$VERSITYGW_VERSION/versitygw"
	echo "export CNM_HELM=$CNM_TOOLS_BIN/helm-$HELM_VERSION/helm"
	echo "export CNM_PROMTOOL=$CNM_PROMETHEUS_DIR/usr/bin/promtool"
	echo "export CNM_PROMETHEUS=$CNM_PROMETHEUS_DIR/usr/bin/prometheus"
}

build_all() {
	# The root filesystem is network and disk bound, the Go builds CPU bound: run them side by side.
	local rootfs_log=$CNM_CACHE/mysql-rootfs.log rc=0
	mkdir -p "$CNM_CACHE"
	# First and alone: it may run apt-get update, which the root filesystem's apt_install would
	# otherwise race for apt's lock.
	fetch_prometheus
	build_mysql_rootfs >"$rootfs_log" 2>&1 &
	local rootfs_pid=$!
	build_kube
	build_versitygw
	build_helm
	wait "$rootfs_pid" || rc=$?
	cat "$rootfs_log" >&2
	[ $rc = 0 ] || die "MySQL root filesystem failed"
}

case "${1:-all}" in
kube) build_kube ;;
versitygw) build_versitygw ;;
helm) build_helm ;;
mysql) build_mysql_rootfs ;;
prometheus) fetch_prometheus ;;
all) build_all ;;
env) print_env ;;
*) die "usage: $0 [kube|versitygw|helm|mysql|prometheus|all|env]" ;;
esac
