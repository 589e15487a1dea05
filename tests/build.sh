#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Builds lfverbs in ./build (configure once, make every time).
# LFV_BUILD_DIR names another build directory; extra arguments go to
# configure (e.g. LFV_BUILD_DIR=build-tsan tests/build.sh --enable-tsan).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null 2>&1
dir=${LFV_BUILD_DIR:-build}
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" -q "$@"
make -s -j"$(nproc)" >/dev/null
