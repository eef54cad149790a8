#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the native test programs into $1 (the temporary project's build dir).
set -e
SRC=$(dirname "$0")
OUT=$1
mkdir -p "$OUT"
cc=gcc
$cc -O0 -o "$OUT/solver" "$SRC/solver_null.c"
$cc -O0 -o "$OUT/collate" "$SRC/double_free.c"
$cc -O0 -o "$OUT/loadw" "$SRC/invalid_free.c"
g++ -O0 -o "$OUT/featcache" "$SRC/bad_alloc.cpp"
g++ -O0 -pthread -o "$OUT/tokenizer" "$SRC/cxx_terminate.cpp"
$cc -O0 -fstack-protector-all -o "$OUT/parse" "$SRC/stack_smash.c"
$cc -O0 -o "$OUT/dispatch" "$SRC/trap.c"
$cc -O0 -o "$OUT/mapshard" "$SRC/sigbus.c"
$cc -shared -fPIC -o "$OUT/libfastops.so" "$SRC/fastops.c"
$cc -shared -fPIC $(python3-config --includes 2>/dev/null || echo -I/usr/include/python3.11) \
    -o "$OUT/_fused_optim.cpython-311-x86_64-linux-gnu.so" "$SRC/pyext.c"
# versioned core library: plugin built against VCORE_2.0, runtime only has VCORE_1.0
printf 'VCORE_2.0 { global: vcore_version; local: *; };\n' > "$OUT/v2.map"
printf 'VCORE_1.0 { global: vcore_version; local: *; };\n' > "$OUT/v1.map"
$cc -shared -fPIC -DVCORE_V=2 -Wl,--version-script="$OUT/v2.map" -Wl,-soname,libvcore.so.1 -o "$OUT/libvcore.so.1" "$SRC/vcore.c"
ln -sf libvcore.so.1 "$OUT/libvcore.so"
$cc -shared -fPIC -o "$OUT/libplugin.so" "$SRC/vuser.c" -L"$OUT" -lvcore
$cc -shared -fPIC -DVCORE_V=1 -Wl,--version-script="$OUT/v1.map" -Wl,-soname,libvcore.so.1 -o "$OUT/libvcore.so.1" "$SRC/vcore.c"
rm -f "$OUT/v1.map" "$OUT/v2.map" "$OUT/libvcore.so"
# custom op library linked against libcudart.so.12; the runtime is then not installed
mkdir -p "$OUT/stub"
$cc -shared -fPIC -Wl,-soname,libcudart.so.12 -o "$OUT/stub/libcudart.so.12" "$SRC/cudart_stub.c"
ln -sf libcudart.so.12 "$OUT/stub/libcudart.so"
$cc -shared -fPIC -o "$OUT/libkernels.so" "$SRC/kernels.c" -L"$OUT/stub" -lcudart
rm -rf "$OUT/stub"
