#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Builds lfverbs in ./build (configure once, make every time).
# Extra arguments go to configure.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null 2>&1
mkdir -p build
cd build
[ -f Makefile ] || ../configure -q "$@"
make -s -j"$(nproc)" >/dev/null
