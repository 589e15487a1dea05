#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Installs the Debian 12 packages lfverbs needs to build, test and run its
# soft-RoCE test bed. Does nothing when everything is already installed.
set -eu

# python3-minimal and procps: fabtests' runfabtests.sh (errno values, ps).
# clang: the fuzz targets (libFuzzer; tests/fuzz/).
# openssh-client: ssh between the two-node bed's VMs (tests/bed/README.md).
# python3 and universal-ctags: the module graph (tests/unit/modgraph.py).
# gdb: the stacks of a hung test (tests/bed/hang-watch).
PACKAGES="
build-essential autoconf automake libtool pkg-config
libfabric-dev libfabric-bin
libibverbs-dev librdmacm-dev ibverbs-providers ibverbs-utils rdmacm-utils
libhwloc-dev libcmocka-dev
openmpi-bin libopenmpi-dev
qemu-system-x86 busybox-static kmod cpio xz-utils iproute2 openssh-client
python3-minimal procps
clang
python3 universal-ctags
gdb
"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# The test bed fetches Debian's kernel with apt-get download: it needs the
# package lists even when every package above is already installed.
apt-cache show linux-image-amd64 >/dev/null 2>&1 || missing="$missing (lists)"
[ -z "$missing" ] && exit 0

echo "deps: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "deps: run as root (or install sudo)" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
pkgs=$(echo "$missing" | sed 's/(lists)//')
# shellcheck disable=SC2086 # one word per package
[ -z "$(echo "$pkgs" | tr -d ' ')" ] ||
	$SUDO apt-get install -y -q --no-install-recommends $pkgs >/dev/null
