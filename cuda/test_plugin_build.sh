#!/bin/sh
# cuda/test_plugin_build.sh: checks every CUDA plugin this build made, with
# no GPU.  Run by `make check` from the top build folder (TAP output), when
# configure took a toolkit; cuda/plugins.txt lists them, one line each:
#   MAJOR RUNTIME ARCHS COMPILER LIBDIR KIND ROOT
# (ARCHS: 75,80,...; PTX for the last; KIND: nvcc or clang; cuda/cuda.m4).
# For each plugin .libs/dyng_cuda<MAJOR>.so it checks that
#  - it needs neither libcudart nor libcuda (DT_NEEDED holds only the C and
#    C++ runtime libraries): the CUDA runtime is linked in statically;
#  - it is marked NODELETE (-z nodelete), so it stays mapped once loaded;
#  - its dynamic symbol table defines dyng_plugin_entry and nothing else;
#  - its description (cuda/plugin_info, init not called) has the abi and
#    version this dyng expects (compiled into plugin_info from
#    engine/backend.h and config.h), the file name's CUDA major, the
#    toolkit's runtime version and the configured archs, and reading it did
#    not load the CUDA driver;
#  - its fat binaries hold SASS for exactly the configured archs and PTX for
#    exactly the highest, as read by plugin_info --device-code and, where the
#    toolkit or PATH has it, by cuobjdump --list-elf / --list-ptx.
# And, with the compiler and flags the plugin was compiled with
# (cuda/obj<MAJOR>/compile-flags), that
#  - the CUDART_VERSION the sources see is the toolkit's (host side, and
#    device side for clang): no other toolkit's headers come first;
#  - cuda/test_ldcg.cu's repeated dyng_ldcg loads all reach the PTX;
#  - for clang, the ptxas and fatbinary it runs are the root's, never those
#    on PATH, and device code is compiled and assembled at -O3.
set -u
builddir=${DYNG_BUILDDIR:-.}
list=$builddir/cuda/plugins.txt
info=$builddir/cuda/plugin_info
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <cuda_runtime_api.h>\ndyng_cudart_version=CUDART_VERSION\n' > "$tmp/v.cu"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
  shift
  for line in "$@"; do echo "# $line"; done
}
# check DESCRIPTION EXPECTED ACTUAL
check() {
  if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "got:      $3"; fi
}
# The sorted, comma-joined lines of standard input.
joined() { sort -u | paste -s -d, -; }

if [ ! -s "$list" ]; then
  echo "1..1"
  echo "not ok 1 - $list lists the plugins configure asked for"
  exit 1
fi
expected_abi=$("$info" --expected | sed -n 's/^abi=//p')
expected_version=$("$info" --expected | sed -n 's/^version=//p')

while read -r major runtime arch compiler libdir kind root; do
  so=$builddir/.libs/dyng_cuda$major.so
  name=dyng_cuda$major.so
  if [ ! -f "$so" ]; then
    not_ok "$name was built" "$so is missing"
    continue
  fi
  ok "$name was built"

  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  unexpected=$(echo "$needed" | grep -v -E '^(libstdc\+\+|libm|libc|libgcc_s|libdl|librt|libpthread|ld-linux[-a-z0-9_]*)\.so(\.[0-9]+)*$')
  check "$name needs only the C and C++ runtimes (no libcudart, no libcuda)" "" "$unexpected"

  if readelf -d "$so" | grep -q 'FLAGS_1.*NODELETE'; then
    ok "$name is NODELETE"
  else
    not_ok "$name is NODELETE" "readelf -d shows no NODELETE flag"
  fi

  exported=$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | joined)
  check "$name exports only dyng_plugin_entry" "dyng_plugin_entry" "$exported"

  # The device code configure asked for: SASS per arch, PTX for the last.
  sass=$(echo "$arch" | tr ',' '\n' | sed 's/^/sm_/' | joined)
  ptx=compute_$(echo "$arch" | tr ',' '\n' | tail -n 1)
  archs=$(echo "$arch" | tr ',' '\n' | sed 's/^/sm_/' | paste -s -d, -),$ptx

  if desc=$("$info" "$so" 2>&1); then
    field() { echo "$desc" | sed -n "s/^$1=//p"; }
    check "$name: abi is DYNG_BACKEND_ABI" "$expected_abi" "$(field abi)"
    check "$name: version is PACKAGE_VERSION" "$expected_version" "$(field version)"
    check "$name: cuda_major matches the file name" "$major" "$(field cuda_major)"
    check "$name: cuda_runtime is the toolkit's" "$runtime" "$(field cuda_runtime)"
    check "$name: archs names the configured device code" "$archs" "$(field archs)"
    check "$name: reading the description does not load the CUDA driver" "no" "$(field driver_loaded)"
  else
    not_ok "$name: plugin_info reads its description" "$desc"
  fi

  if code=$("$info" --device-code "$so" 2>&1); then
    check "$name: SASS images (.nv_fatbin)" "$sass" "$(echo "$code" | grep '^sm_' | joined)"
    check "$name: PTX images (.nv_fatbin)" "$ptx" "$(echo "$code" | grep '^compute_' | joined)"
  else
    not_ok "$name: plugin_info reads its .nv_fatbin section" "$code"
  fi

  cuobjdump=$root/bin/cuobjdump
  [ -x "$cuobjdump" ] || cuobjdump=$(command -v cuobjdump || true)
  if [ -n "$cuobjdump" ]; then
    elf=$("$cuobjdump" --list-elf "$so" 2>&1 | sed -n 's/.*\.\(sm_[0-9a-z]*\)\.cubin$/\1/p' | joined)
    check "$name: SASS images (cuobjdump --list-elf)" "$sass" "$elf"
    ptx_found=$("$cuobjdump" --list-ptx "$so" 2>&1 | sed -n 's/.*\.sm_\([0-9a-z]*\)\.ptx$/compute_\1/p' | joined)
    check "$name: PTX images (cuobjdump --list-ptx)" "$ptx" "$ptx_found"
  else
    echo "# no cuobjdump in $root/bin or on PATH: device code read by plugin_info only"
  fi

  flags_file=$builddir/cuda/obj$major/compile-flags
  if ! read -r fkind fcompiler flags < "$flags_file"; then
    not_ok "$name: $flags_file gives the compiler and its flags"
    continue
  fi
  check "$name: compiled by the configured compiler" "$kind $compiler" "$fkind $fcompiler"
  last=$(echo "$arch" | tr ',' '\n' | tail -n 1)
  # $flags is split into words on purpose: it is a command line.
  if [ "$kind" = clang ]; then
    one_arch="--cuda-gpu-arch=sm_$last"
    sides="host device"
  else
    one_arch="-arch=sm_$last"
    sides=host
  fi
  for side in $sides; do
    if [ "$kind" = clang ]; then side_flag=--cuda-$side-only; else side_flag="-x c++"; fi
    seen=$("$compiler" $flags $one_arch $side_flag -E "$tmp/v.cu" 2>"$tmp/err" | sed -n 's/^dyng_cudart_version= *//p')
    check "$name: the sources see CUDART_VERSION $runtime ($side side)" "$runtime" "$seen"
  done

  if [ "$kind" = clang ]; then
    "$compiler" $flags $one_arch --cuda-device-only -S -o "$tmp/ldcg.ptx" "$here/test_ldcg.cu" 2>"$tmp/err"
  else
    "$compiler" $flags $one_arch -ptx -o "$tmp/ldcg.ptx" "$here/test_ldcg.cu" 2>"$tmp/err"
  fi
  if [ $? -eq 0 ]; then
    for kernel in dyng_probe_fence_u32 dyng_probe_atomic_u64; do
      loads=$(sed -n "/^.visible .entry .*$kernel/,/^}/p" "$tmp/ldcg.ptx" | grep -c 'ld\.global\.cg')
      check "$name: both dyng_ldcg loads of $kernel reach the PTX" "2" "$loads"
    done
  else
    not_ok "$name: cuda/test_ldcg.cu compiles to PTX" "$(cat "$tmp/err")"
  fi

  if [ "$kind" = clang ]; then
    "$compiler" -### $flags $one_arch -c -o "$tmp/x.o" "$here/test_ldcg.cu" > "$tmp/cmds" 2>&1
    tool_lines() { grep -E "^ \"[^\"]*/$1\" " "$tmp/cmds"; }
    check "$name: clang runs $root/bin/ptxas" "$root/bin/ptxas" \
      "$(tool_lines ptxas | cut -d'"' -f2 | sort -u)"
    check "$name: clang runs $root/bin/fatbinary" "$root/bin/fatbinary" \
      "$(tool_lines fatbinary | cut -d'"' -f2 | sort -u)"
    check "$name: ptxas assembles at -O3" "1" \
      "$(tool_lines ptxas | grep -c '"-O3"')"
    check "$name: device code is compiled at -O3" "-O3" \
      "$(grep -- '"-fcuda-is-device"' "$tmp/cmds" | grep -o '"-O[0-9sz]*"' | tail -n 1 | tr -d '"')"
  fi
done < "$list"

echo "1..$n"
[ "$failed" -eq 0 ]
