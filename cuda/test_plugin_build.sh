#!/bin/sh
# cuda/test_plugin_build.sh: checks every CUDA plugin this build made, with
# no GPU.  Run by `make check` from the top build folder (TAP output), when
# configure took a toolkit; cuda/plugins.txt lists them, one line each:
#   MAJOR RUNTIME ARCHS NVCC LIBDIR     (ARCHS: 75,80,...; PTX for the last)
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
set -u
builddir=${DYNG_BUILDDIR:-.}
list=$builddir/cuda/plugins.txt
info=$builddir/cuda/plugin_info

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

while read -r major runtime arch nvcc libdir; do
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

  cuobjdump=$(dirname "$nvcc")/cuobjdump
  [ -x "$cuobjdump" ] || cuobjdump=$(command -v cuobjdump || true)
  if [ -n "$cuobjdump" ]; then
    elf=$("$cuobjdump" --list-elf "$so" 2>&1 | sed -n 's/.*\.\(sm_[0-9a-z]*\)\.cubin$/\1/p' | joined)
    check "$name: SASS images (cuobjdump --list-elf)" "$sass" "$elf"
    ptx_found=$("$cuobjdump" --list-ptx "$so" 2>&1 | sed -n 's/.*\.sm_\([0-9a-z]*\)\.ptx$/compute_\1/p' | joined)
    check "$name: PTX images (cuobjdump --list-ptx)" "$ptx" "$ptx_found"
  else
    echo "# no cuobjdump beside $nvcc or on PATH: device code read by plugin_info only"
  fi
done < "$list"

echo "1..$n"
[ "$failed" -eq 0 ]
