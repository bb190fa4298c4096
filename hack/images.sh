#!/usr/bin/env bash
# images.sh is `make images`: the operator's image and the instance image as OCI archives, for a
# user to copy into their registry (docs/install.md, "Images for your registry"), packed by
# hack/tools/images (imgpack) without a container engine:
#   $IMAGES_OUT/operator.tar  cloudnative-mysql/operator:dev  the manager binary alone, as 65532
#   $IMAGES_OUT/mysql.tar     cloudnative-mysql/mysql:9.7     the MySQL 9.7 root filesystem of
#                             `hack/substrate.sh mysql` (built when missing), as mysql (999)
# IMAGES_OUT defaults to bin/images in the repository. Each archive is an OCI image layout in a tar
# (skopeo's oci-archive:) that also carries a docker-archive's manifest.json (ctr images import).
# The production images (hack/images/*.Containerfile: the operator on a distroless base, Percona
# Server 8.4 with XtraBackup) need a container engine and registries this machine has not.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IMAGES_OUT=${IMAGES_OUT:-$CNM_ROOT/bin/images}
OPERATOR_IMAGE=cloudnative-mysql/operator:dev
MYSQL_IMAGE=cloudnative-mysql/mysql:9.7

mkdir -p "$IMAGES_OUT"
work=$(mktemp -d "$IMAGES_OUT/.work-XXXXXX")
trap 'rm -rf "$work"' EXIT

(cd "$CNM_ROOT/hack/tools/images" && CGO_ENABLED=0 go build -trimpath -o "$work/imgpack" .)

log "building the operator image (the manager binary)"
(cd "$CNM_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$work/manager" ./cmd/manager)
"$work/imgpack" -format oci -ref "$OPERATOR_IMAGE" -out "$IMAGES_OUT/operator.tar" -add "$work/manager:/manager" \
	-entrypoint /manager -user 65532

[ -f "$CNM_MYSQL_ROOTFS/.complete" ] || bash "$CNM_ROOT/hack/substrate.sh" mysql
log "building the MySQL image from $CNM_MYSQL_ROOTFS (a minute)"
mysql_image_extra "$work/mysql-extra"
"$work/imgpack" -format oci -ref "$MYSQL_IMAGE" -out "$IMAGES_OUT/mysql.tar" -add "$work/mysql-extra:/" "${MYSQL_IMAGE_LAYOUT[@]}"

log "OCI archives in $IMAGES_OUT: operator.tar ($OPERATOR_IMAGE), mysql.tar ($MYSQL_IMAGE)"
