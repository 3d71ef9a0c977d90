#!/bin/sh
# cuda/toolkit-from-wheels.sh: assembles a CUDA 12.9 root from NVIDIA's PyPI
# wheels, for building dyng_cuda12.so with clang where no CUDA 12 nvcc is
# installed (cuda/README.md, "The CUDA 12 line"):
#
#   sh cuda/toolkit-from-wheels.sh DEST
#   ./configure --with-cuda-extra=clang:DEST     (clang from CUDA_CLANG, default clang++-22)
#
# The wheels are pinned below, by version and sha256.  They are downloaded
# once (pip download --no-deps --only-binary=:all:) into a cache,
# $DYNG_WHEEL_CACHE or else ~/.cache/dyng/wheels; a wheel already there with
# the right hash is not fetched again, so a second run needs no network.
# DEST then gets:
#   bin/ptxas                 from nvidia-cuda-nvcc-cu12 (PTX to SASS)
#   bin/fatbinary             cuda/fatbinary-nvfatbin.c, compiled here on nvFatbin
#   include/                  the runtime's headers, nvcc's crt/ headers, CUB,
#                             Thrust and libcu++ (cccl), nvFatbin.h
#   lib64/                    libcudart_static.a (what the plugin links),
#                             libcudadevrt.a, libculibos.a, libnvfatbin.so.12
#   nvvm/libdevice/           libdevice.10.bc (the device math library)
#   EULA.txt                  the CUDA runtime's licence, which the plugin carries
#   dyng-toolkit.txt          the wheels and fatbinary source it was made from
# The wheels hold no nvcc, cudafe++, cicc, fatbinary or nvlink: the root is
# for clang's CUDA compiler only.  A DEST this script made from the same
# wheels and fatbinary source is left as it is; one made from others is
# replaced whole; any other existing DEST is refused.  Needs python3 with
# pip and a C compiler ($CC, default cc).
set -eu

usage() { echo "usage: $0 DEST" >&2; exit 2; }
[ $# -eq 1 ] || usage
dest=${1%/}
case $dest in
  ''|*' '*|*'	'*|*:*) echo "$0: DEST must be a path without spaces or colons (configure cannot use one)" >&2; exit 2;;
esac
src=$(cd "$(dirname "$0")" && pwd)
cache=${DYNG_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dyng/wheels}
CC=${CC:-cc}
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

# The wheels: name, version, sha256 of the manylinux x86_64 wheel.
wheels='
nvidia-cuda-nvcc-cu12 12.9.86 5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0
nvidia-cuda-runtime-cu12 12.9.79 25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3
nvidia-cuda-cccl-cu12 12.9.27 37869e17ce2e1ecec6eddf1927cca0f8c34e64fd848d40453df559091e2d7117
nvidia-nvfatbin-cu12 12.9.82 16cbfbd12287508212f22f42dff6ff51cf9b528b906f57f615b080da16dea1ea
'
case $(uname -m) in
  x86_64) ;;
  *) echo "$0: the pinned wheels are for x86_64, not $(uname -m)" >&2; exit 1;;
esac

# The cached wheel of NAME VERSION whose hash is SHA, or nothing.
cached() {
  for f in "$cache"/$(echo "$1" | tr - _)-"$2"-*.whl; do
    [ -f "$f" ] && [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$3" ] && { echo "$f"; return; }
  done
  return 0
}

# What DEST is made from; an existing DEST made from the same is kept.
made_from() {
  echo "# CUDA 12.9 root for clang, made by dyng's cuda/toolkit-from-wheels.sh from:"
  echo "$wheels" | while read -r name version sha; do
    [ -z "$name" ] || echo "$name==$version sha256:$sha"
  done
  echo "fatbinary-nvfatbin.c sha256:$(sha256sum "$src/fatbinary-nvfatbin.c" | cut -d' ' -f1)"
}
if [ -f "$dest/dyng-toolkit.txt" ] && [ -x "$dest/bin/fatbinary" ] &&
   [ "$(made_from)" = "$(cat "$dest/dyng-toolkit.txt")" ]; then
  echo "toolkit-from-wheels: $dest is up to date"
  exit 0
fi

mkdir -p "$cache"
req=$(mktemp)
trap 'rm -f "$req"' EXIT
echo "$wheels" | while read -r name version sha; do
  [ -n "$name" ] || continue
  [ -n "$(cached "$name" "$version" "$sha")" ] || echo "$name==$version --hash=sha256:$sha"
done > "$req"
if [ -s "$req" ]; then
  echo "toolkit-from-wheels: downloading $(cut -d' ' -f1 "$req" | paste -s -d' ' -) into $cache"
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --require-hashes -r "$req" -d "$cache"
fi

# Unpacked into DEST.new, moved to DEST when complete.
if [ -e "$dest" ] && [ ! -f "$dest/dyng-toolkit.txt" ]; then
  echo "$0: $dest exists and was not made by this script; not replacing it" >&2
  exit 1
fi
new=$dest.new
rm -rf "$new"
mkdir -p "$new/unpacked" "$new/bin" "$new/include" "$new/lib64" "$new/nvvm"
echo "$wheels" | while read -r name version sha; do
  [ -n "$name" ] || continue
  whl=$(cached "$name" "$version" "$sha")
  if [ -z "$whl" ]; then echo "$0: $name $version with sha256 $sha is not in $cache" >&2; exit 1; fi
  "$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$new/unpacked"
done
made_from > "$new/dyng-toolkit.txt"
u=$new/unpacked/nvidia
cp "$u/cuda_nvcc/bin/ptxas" "$new/bin/ptxas"
chmod 755 "$new/bin/ptxas"
cp -R "$u/cuda_runtime/include/." "$u/cuda_nvcc/include/." "$u/cuda_cccl/include/." "$new/include/"
cp "$u/nvfatbin/include/nvFatbin.h" "$new/include/"
cp "$u/cuda_runtime/lib/libcudart_static.a" "$u/cuda_runtime/lib/libcudadevrt.a" \
  "$u/cuda_runtime/lib/libculibos.a" "$u/nvfatbin/lib/libnvfatbin.so.12" "$new/lib64/"
cp -R "$u/cuda_nvcc/nvvm/libdevice" "$new/nvvm/"
cp "$new"/unpacked/nvidia_cuda_runtime_cu12-*.dist-info/licenses/License.txt "$new/EULA.txt"
rm -rf "$new/unpacked"

# The fatbinary clang runs, on nvFatbin; it finds the library beside it.
"$CC" -std=c11 -O2 -Wall -Wextra -o "$new/bin/fatbinary" "$src/fatbinary-nvfatbin.c" \
  -I"$new/include" "$new/lib64/libnvfatbin.so.12" -Wl,-rpath,'$ORIGIN/../lib64'

# The version clang will read (include/cuda.h), as a check of what was made.
version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$new/include/cuda.h")
if [ "$version" != 12090 ]; then
  echo "$0: $new/include/cuda.h says CUDA_VERSION $version, not 12090" >&2
  exit 1
fi
rm -rf "$dest"
mv "$new" "$dest"
echo "toolkit-from-wheels: CUDA 12.9 ($version) in $dest"
