# shellcheck shell=bash
# Shared settings for the hack/ scripts: versions, the cache directory and small helpers.
# Sourced, never run. Everything the scripts build lands under $CNM_CACHE, outside the repository.

set -euo pipefail

CNM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CNM_CACHE=${CNM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudnative-mysql}

K8S_VERSION=v1.34.10
ETCD_VERSION=v3.6.16
VERSITYGW_VERSION=v1.8.0
HELM_VERSION=v3.22.0
HELM_K8S_MINOR=37 # Helm v3.22.0 is built with client-go v0.37: Kubernetes 1.37
MYSQL_ROOTFS_VERSION=1 # bump to force a rebuild of the MySQL root filesystem
PROMETHEUS_UNPACK_VERSION=1 # bump to force a new download of Debian's prometheus package

CNM_K8S_BIN=$CNM_CACHE/k8s/$K8S_VERSION
CNM_TOOLS_BIN=$CNM_CACHE/bin
CNM_MYSQL_ROOTFS=$CNM_CACHE/mysql-rootfs/v$MYSQL_ROOTFS_VERSION
CNM_PROMETHEUS_DIR=$CNM_CACHE/prometheus/v$PROMETHEUS_UNPACK_VERSION

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# tree_hash prints a digest of the files below the given directories, so a cached build is redone
# when its sources change.
tree_hash() {
	find "$@" -type f \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' -o -name '*.sh' \) -print0 |
		sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
}

# apt_install installs Debian packages that are missing, running apt-get update once if needed.
apt_install() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "need root to install ${missing[*]}"
	log "installing Debian packages: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# debian_mirror prints the Debian archive this machine's apt is configured with, so no host name is
# ever written into the repository.
debian_mirror() {
	local uri=""
	if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
		uri=$(awk '/^URIs:/ {for (i = 2; i <= NF; i++) print $i}' /etc/apt/sources.list.d/*.sources |
			grep -v -- '-security' | head -n 1)
	fi
	if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; break}}' /etc/apt/sources.list |
			grep -v -- '-security' | head -n 1)
	fi
	[ -n "$uri" ] || die "no Debian mirror found in the apt configuration"
	printf '%s\n' "$uri"
}

# mysql_image_extra writes into dir what the mysql-server package would create beside the -core
# binaries of the MySQL root filesystem, the second layer source of the MySQL image: the mysql user
# and group as 999 (mysqld refuses to run as root; the operator runs instances as 999), and its
# directories.
mysql_image_extra() {
	local extra=$1
	rm -rf "$extra" && mkdir -p "$extra/var/lib/mysql-files" "$extra/var/lib/mysql" "$extra/run/mysqld" "$extra/etc"
	{ grep -v '^mysql:' "$CNM_MYSQL_ROOTFS/etc/passwd"; echo 'mysql:x:999:999:MySQL Server:/var/lib/mysql:/bin/false'; } >"$extra/etc/passwd"
	{ grep -v '^mysql:' "$CNM_MYSQL_ROOTFS/etc/group"; echo 'mysql:x:999:'; } >"$extra/etc/group"
	chmod 750 "$extra/var/lib/mysql-files"
	chown 999:999 "$extra/var/lib/mysql-files" "$extra/var/lib/mysql" "$extra/run/mysqld"
}

# MYSQL_IMAGE_LAYOUT are imgpack's arguments for the MySQL image but its -ref, -out and the extra
# layer's -add: the root filesystem with its scratch directories left empty, run as mysql.
MYSQL_IMAGE_LAYOUT=(-add "$CNM_MYSQL_ROOTFS:/" -empty tmp -empty var/tmp -empty run -empty proc -empty sys -empty dev
	-entrypoint /usr/sbin/mysqld -user 999:999)
