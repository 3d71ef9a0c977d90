# cuda/cuda.m4: configure's search for the CUDA toolkits the backend plugin
# dyng_cuda<MAJOR>.so is built with (cuda/README.md).
#
# DYNG_CUDA reads --with-cuda, --with-cuda-arch and --with-cuda-extra (set
# up in configure.ac), tries each toolkit with dyng_cuda_probe (nvcc) or
# dyng_cuda_probe_clang (a CUDA root compiled by clang, given as
# --with-cuda-extra=clang:DIR) and substitutes DYNG_CUDA_TOOLKITS: one word
# per usable toolkit,
#   MAJOR:RUNTIME:ARCHS:COMPILER:LIBDIR:KIND:ROOT
# e.g. 13:13000:75,80,86,89,90,100,120:/usr/local/cuda/bin/nvcc:/usr/local/cuda/lib64:nvcc:/usr/local/cuda
# or 12:12090:90:/usr/bin/clang++-22:/opt/cu12/lib64:clang:/opt/cu12,
# the main toolkit first.  ARCHS are the compute capabilities (ascending)
# the plugin gets SASS for; the last one also gets PTX.  COMPILER compiles
# the .cu files; LIBDIR holds libcudart_static.a; KIND (nvcc or clang) says
# how COMPILER is driven; ROOT is the toolkit's folder (its licence).  The
# AM_CONDITIONAL DYNG_CUDA says whether any plugin is built.
#
# DYNG_CUDA_SUMMARY, called after AC_OUTPUT, prints which of the CUDA lines
# (dyng_cuda13.so, dyng_cuda12.so, and any other major taken) will be built
# and, for each that will not, why and what would build it; the same lines
# go to config.log as "summary: dyng_cudaMAJOR.so: yes (...)" or "no (...)".

# dyng_cuda_probe: tries the toolkit of the compiler driver $dyng_tk_nvcc
# with the compute capabilities $dyng_cuda_arch_list (ascending, space
# separated).  Sets dyng_tk_error to why it is not usable, or to nothing
# and then dyng_tk_major, dyng_tk_runtime (CUDART_VERSION, e.g. 13000),
# dyng_tk_arch (the capabilities it can compile, comma separated),
# dyng_tk_dropped (those it cannot), dyng_tk_libdir, dyng_tk_compiler
# (nvcc), dyng_tk_kind (nvcc) and dyng_tk_root.  Needs no GPU.
AC_DEFUN([DYNG_CUDA_PROBE_FN], [
dyng_cuda_probe () {
  dyng_tk_error= dyng_tk_major= dyng_tk_runtime= dyng_tk_arch= dyng_tk_libdir=
  dyng_tk_kind=nvcc dyng_tk_compiler=$dyng_tk_nvcc dyng_tk_root= dyng_tk_name=$dyng_tk_nvcc
  case $dyng_tk_nvcc in
    *' '* | *'	'* | *:*)
      dyng_tk_error="$dyng_tk_nvcc: a path with a space or a colon cannot be used"
      return;;
  esac
  if test ! -x "$dyng_tk_nvcc"; then
    dyng_tk_error="$dyng_tk_nvcc not found"
    return
  fi
  rm -rf conftest.cuda && mkdir conftest.cuda
  cat > conftest.cuda/t.cu <<'_DYNG_EOF'
#include <cuda_runtime.h>
__global__ void dyng_probe(int *p) { *p = 1; }
int main(void) { return cudaGetLastError() == cudaSuccess ? 0 : 1; }
_DYNG_EOF
  cat > conftest.cuda/v.cu <<'_DYNG_EOF'
#include <cuda_runtime_api.h>
dyng_cudart_version=CUDART_VERSION
_DYNG_EOF

  # A program with device code links with the static runtime.
  AS_ECHO(["$as_me:$LINENO: $dyng_tk_nvcc -cudart static -o conftest.cuda/t conftest.cuda/t.cu"]) >&AS_MESSAGE_LOG_FD
  if "$dyng_tk_nvcc" -cudart static -o conftest.cuda/t conftest.cuda/t.cu >&AS_MESSAGE_LOG_FD 2>&1; then :; else
    dyng_tk_error="$dyng_tk_nvcc cannot compile and link a program with -cudart static (see config.log)"
    return
  fi

  # The runtime version, from the headers (no GPU needed).
  dyng_tk_runtime=`"$dyng_tk_nvcc" -E -x c++ conftest.cuda/v.cu 2>&AS_MESSAGE_LOG_FD |
    $SED -n 's/^dyng_cudart_version= *//p' | $SED 1q`
  case $dyng_tk_runtime in
    ''|*@<:@!0-9@:>@*)
      dyng_tk_error="$dyng_tk_nvcc: cannot read CUDART_VERSION from cuda_runtime_api.h"
      return;;
  esac
  dyng_tk_major=`expr $dyng_tk_runtime / 1000`

  # The capabilities this nvcc compiles SASS for.
  dyng_tk_codes=`"$dyng_tk_nvcc" --list-gpu-code 2>&AS_MESSAGE_LOG_FD`
  if test -z "$dyng_tk_codes"; then
    dyng_tk_error="$dyng_tk_nvcc --list-gpu-code lists nothing (CUDA 11.0 or newer is needed)"
    return
  fi
  dyng_tk_dropped=
  for dyng_a in $dyng_cuda_arch_list; do
    if AS_ECHO(["$dyng_tk_codes"]) | grep -qx "sm_$dyng_a"; then
      dyng_tk_arch=$dyng_tk_arch${dyng_tk_arch:+,}$dyng_a
    else
      dyng_tk_dropped=$dyng_tk_dropped${dyng_tk_dropped:+,}$dyng_a
    fi
  done
  if test -z "$dyng_tk_arch"; then
    dyng_tk_error="$dyng_tk_nvcc compiles none of the requested archs ($dyng_tk_dropped)"
    return
  fi

  # libcudart_static.a, for linking the plugin with $CXX: in the folders
  # nvcc itself links from (its LIBRARIES), else beside its bin/, else where
  # $CXX finds libraries (Debian's nvcc in /usr/bin).
  dyng_tk_bindir=`dirname "$dyng_tk_nvcc"`
  dyng_tk_dirs=`"$dyng_tk_nvcc" -dryrun -cudart static -o conftest.cuda/t conftest.cuda/t.cu 2>&1 |
    $SED -n 's/^#.*LIBRARIES=//p' | tr -d '"' | tr ' ' '\n' | $SED -n 's/^-L//p'`
  for dyng_d in $dyng_tk_dirs "$dyng_tk_bindir/../lib64" "$dyng_tk_bindir/../lib"; do
    if test -f "$dyng_d/libcudart_static.a"; then
      dyng_tk_libdir=`cd "$dyng_d" && pwd -P`
      break
    fi
  done
  if test -z "$dyng_tk_libdir"; then
    dyng_d=`$CXX -print-file-name=libcudart_static.a 2>/dev/null`
    case $dyng_d in /*) dyng_tk_libdir=`dirname "$dyng_d"`;; esac
  fi
  if test -z "$dyng_tk_libdir"; then
    dyng_tk_error="libcudart_static.a of $dyng_tk_nvcc not found"
    return
  fi

  # The plugin's own link: position-independent objects from nvcc, linked
  # by $CXX into a shared object with the static runtime.
  AS_ECHO(["$as_me:$LINENO: linking a shared object with $dyng_tk_libdir/libcudart_static.a"]) >&AS_MESSAGE_LOG_FD
  if "$dyng_tk_nvcc" -c -Xcompiler -fPIC -o conftest.cuda/t.o conftest.cuda/t.cu >&AS_MESSAGE_LOG_FD 2>&1 &&
     $CXX -shared -o conftest.cuda/t.so conftest.cuda/t.o -L"$dyng_tk_libdir" -lcudart_static \
       -lrt -lpthread -ldl -Wl,-z,defs >&AS_MESSAGE_LOG_FD 2>&1; then :; else
    dyng_tk_error="$CXX cannot link objects of $dyng_tk_nvcc and libcudart_static.a into a shared object (see config.log)"
    return
  fi
  # The toolkit's root: the TOP nvcc itself reports (nvcc on PATH may be a
  # wrapper script elsewhere, such as /usr/local/bin/nvcc), else above bin/.
  dyng_d=`"$dyng_tk_nvcc" -dryrun -c -o conftest.cuda/t.o conftest.cuda/t.cu 2>&1 |
    $SED -n 's/^#\$ TOP=//p' | $SED 1q`
  if test -n "$dyng_d" && test -d "$dyng_d"; then
    dyng_tk_root=`cd "$dyng_d" && pwd -P`
  else
    dyng_tk_root=`cd "$dyng_tk_bindir/.." && pwd`
  fi
  rm -rf conftest.cuda
}
])

# dyng_cuda_probe_clang: tries the CUDA root $dyng_tk_root with $CUDA_CLANG
# as its compiler, clang compiling CUDA as a language (the CUDA 12 line,
# built from PyPI's wheels by cuda/toolkit-from-wheels.sh).  Sets what
# dyng_cuda_probe sets.  The root is usable when
#  - it has bin/ptxas, bin/fatbinary, include/cuda_runtime_api.h and
#    lib64/libcudart_static.a, and clang runs the root's ptxas and fatbinary
#    (never those on PATH: a CUDA 13 fatbinary there would be taken
#    silently where the root has none);
#  - the CUDART_VERSION clang sees, host and device side, is the root's:
#    -isystem puts the root's headers before /usr/local/include, where
#    another toolkit's may lie (cuda/Makefile.mk compiles with the same
#    flags);
#  - each arch compiles (those that do not are dropped, as for nvcc);
#  - $CXX links an object of it with the root's libcudart_static.a into a
#    shared object.
AC_DEFUN([DYNG_CUDA_PROBE_CLANG_FN], [
dyng_cuda_probe_clang () {
  dyng_tk_error= dyng_tk_major= dyng_tk_runtime= dyng_tk_arch= dyng_tk_libdir= dyng_tk_dropped=
  dyng_tk_kind=clang dyng_tk_compiler= dyng_tk_name=clang:$dyng_tk_root
  case $dyng_tk_root in
    '' | *' '* | *'	'* | *:*)
      dyng_tk_error="clang:$dyng_tk_root: a path with a space or a colon cannot be used"
      return;;
  esac
  if test ! -d "$dyng_tk_root"; then
    dyng_tk_error="clang:$dyng_tk_root: no such folder"
    return
  fi
  dyng_tk_root=`cd "$dyng_tk_root" && pwd`
  dyng_tk_name=clang:$dyng_tk_root
  for dyng_f in bin/ptxas bin/fatbinary; do
    if test ! -x "$dyng_tk_root/$dyng_f"; then
      dyng_tk_error="$dyng_tk_root/$dyng_f not found (cuda/toolkit-from-wheels.sh makes a CUDA root for clang)"
      return
    fi
  done
  for dyng_f in include/cuda_runtime_api.h lib64/libcudart_static.a; do
    if test ! -f "$dyng_tk_root/$dyng_f"; then
      dyng_tk_error="$dyng_tk_root/$dyng_f not found"
      return
    fi
  done
  dyng_tk_libdir=$dyng_tk_root/lib64
  dyng_tk_compiler=`command -v "$CUDA_CLANG" 2>/dev/null`
  case $dyng_tk_compiler in
    /*) ;;
    *) dyng_tk_error="CUDA_CLANG=$CUDA_CLANG not found (Debian: apt-get install clang-22)"
       return;;
  esac
  case $dyng_tk_compiler in
    *' '* | *'	'* | *:*)
      dyng_tk_error="$dyng_tk_compiler: a path with a space or a colon cannot be used"
      return;;
  esac
  dyng_tk_runtime=`$SED -n 's/^#define CUDART_VERSION  *\(@<:@0-9@:>@*\).*/\1/p' "$dyng_tk_root/include/cuda_runtime_api.h" | $SED 1q`
  if test -z "$dyng_tk_runtime"; then
    dyng_tk_error="cannot read CUDART_VERSION from $dyng_tk_root/include/cuda_runtime_api.h"
    return
  fi
  dyng_tk_major=`expr $dyng_tk_runtime / 1000`

  rm -rf conftest.cuda && mkdir conftest.cuda
  cat > conftest.cuda/t.cu <<'_DYNG_EOF'
#include <cuda_runtime.h>
__global__ void dyng_probe(int *p) { *p = CUDART_VERSION; }
extern "C" int dyng_probe_launch(int *p) { dyng_probe<<<1, 1>>>(p); return cudaGetLastError() == cudaSuccess; }
_DYNG_EOF
  cat > conftest.cuda/v.cu <<'_DYNG_EOF'
#include <cuda_runtime_api.h>
dyng_cudart_version=CUDART_VERSION
_DYNG_EOF
  dyng_tk_cuflags="-x cuda --cuda-path=$dyng_tk_root -isystem $dyng_tk_root/include -Wno-unknown-cuda-version"
  dyng_tk_first=`AS_ECHO(["$dyng_cuda_arch_list"]) | $AWK '{print $[]1}'`

  # The version clang sees on each side.
  for dyng_side in host device; do
    dyng_v=`"$dyng_tk_compiler" $dyng_tk_cuflags --cuda-gpu-arch=sm_$dyng_tk_first --cuda-$dyng_side-only \
      -E conftest.cuda/v.cu 2>&AS_MESSAGE_LOG_FD | $SED -n 's/^dyng_cudart_version= *//p' | $SED 1q`
    if test "x$dyng_v" != "x$dyng_tk_runtime"; then
      dyng_tk_error="$dyng_tk_compiler sees CUDART_VERSION '$dyng_v' on the $dyng_side side, not the $dyng_tk_runtime of $dyng_tk_root (see config.log)"
      return
    fi
  done

  # The tools clang runs are the root's.
  dyng_tk_cmds=`"$dyng_tk_compiler" -### $dyng_tk_cuflags --cuda-gpu-arch=sm_$dyng_tk_first -c \
    -o conftest.cuda/t.o conftest.cuda/t.cu 2>&1`
  AS_ECHO(["$dyng_tk_cmds"]) >&AS_MESSAGE_LOG_FD
  for dyng_f in ptxas fatbinary; do
    if AS_ECHO(["$dyng_tk_cmds"]) | grep -q "^ \"$dyng_tk_root/bin/$dyng_f\" "; then :; else
      dyng_tk_error="$dyng_tk_compiler does not run $dyng_tk_root/bin/$dyng_f (see config.log)"
      return
    fi
  done

  # Each arch, one at a time.
  for dyng_a in $dyng_cuda_arch_list; do
    AS_ECHO(["$as_me:$LINENO: $dyng_tk_compiler $dyng_tk_cuflags --cuda-gpu-arch=sm_$dyng_a -c conftest.cuda/t.cu"]) >&AS_MESSAGE_LOG_FD
    if "$dyng_tk_compiler" $dyng_tk_cuflags --cuda-gpu-arch=sm_$dyng_a -c -o conftest.cuda/t.o \
         conftest.cuda/t.cu >&AS_MESSAGE_LOG_FD 2>&1; then
      dyng_tk_arch=$dyng_tk_arch${dyng_tk_arch:+,}$dyng_a
    else
      dyng_tk_dropped=$dyng_tk_dropped${dyng_tk_dropped:+,}$dyng_a
    fi
  done
  if test -z "$dyng_tk_arch"; then
    dyng_tk_error="$dyng_tk_compiler compiles none of the requested archs ($dyng_tk_dropped) with $dyng_tk_root (see config.log)"
    return
  fi

  # The plugin's own link.
  AS_ECHO(["$as_me:$LINENO: linking a shared object with $dyng_tk_libdir/libcudart_static.a"]) >&AS_MESSAGE_LOG_FD
  if "$dyng_tk_compiler" $dyng_tk_cuflags --cuda-gpu-arch=sm_$dyng_tk_first -fPIC -c -o conftest.cuda/t.o \
       conftest.cuda/t.cu >&AS_MESSAGE_LOG_FD 2>&1 &&
     $CXX -shared -o conftest.cuda/t.so conftest.cuda/t.o -L"$dyng_tk_libdir" -lcudart_static \
       -lrt -lpthread -ldl -Wl,-z,defs >&AS_MESSAGE_LOG_FD 2>&1; then :; else
    dyng_tk_error="$CXX cannot link objects of $dyng_tk_compiler and $dyng_tk_libdir/libcudart_static.a into a shared object (see config.log)"
    return
  fi
  rm -rf conftest.cuda
}
])

# dyng_cuda_add: appends the toolkit just probed to DYNG_CUDA_TOOLKITS;
# a second toolkit of the same major is an error.
AC_DEFUN([DYNG_CUDA_ADD_FN], [
dyng_cuda_add () {
  case " $dyng_cuda_majors " in
    *" $dyng_tk_major "*)
      AC_MSG_ERROR([$dyng_tk_name is CUDA $dyng_tk_major too: one toolkit per CUDA major])
  esac
  dyng_cuda_majors="$dyng_cuda_majors $dyng_tk_major"
  AS_IF([test "x$dyng_tk_kind" = xclang],
    [dyng_s="$dyng_tk_compiler with $dyng_tk_root"], [dyng_s="$dyng_tk_nvcc"])
  eval "dyng_cuda_built_$dyng_tk_major=\"CUDA $dyng_tk_major, runtime $dyng_tk_runtime, \$dyng_s, archs $dyng_tk_arch\""
  DYNG_CUDA_TOOLKITS="$DYNG_CUDA_TOOLKITS${DYNG_CUDA_TOOLKITS:+ }$dyng_tk_major:$dyng_tk_runtime:$dyng_tk_arch:$dyng_tk_compiler:$dyng_tk_libdir:$dyng_tk_kind:$dyng_tk_root"
  AS_IF([test "x$dyng_tk_kind" = xclang],
    [AC_MSG_RESULT([$dyng_tk_compiler with $dyng_tk_root (CUDA $dyng_tk_major, runtime $dyng_tk_runtime, archs $dyng_tk_arch)])],
    [AC_MSG_RESULT([$dyng_tk_nvcc (CUDA $dyng_tk_major, runtime $dyng_tk_runtime, archs $dyng_tk_arch)])])
  if test -n "$dyng_tk_dropped"; then
    AC_MSG_WARN([CUDA $dyng_tk_major ($dyng_tk_name) cannot compile SASS for $dyng_tk_dropped: left out of its plugin])
  fi
}
])

AC_DEFUN([DYNG_CUDA], [
AC_REQUIRE([AC_PROG_SED])
AC_REQUIRE([AC_PROG_AWK])
DYNG_CUDA_PROBE_FN
DYNG_CUDA_PROBE_CLANG_FN
DYNG_CUDA_ADD_FN
DYNG_CUDA_TOOLKITS=
dyng_cuda_majors=

# The compute capabilities, checked and sorted once for every toolkit.
dyng_cuda_arch_list=
for dyng_a in `AS_ECHO(["$with_cuda_arch"]) | tr ',' ' '`; do
  case $dyng_a in
    *@<:@!0-9@:>@*)
      AC_MSG_ERROR([--with-cuda-arch: '$dyng_a' is not a compute capability such as 75 or 120]);;
  esac
  if test "$dyng_a" -lt 75; then
    AC_MSG_ERROR([--with-cuda-arch: $dyng_a is below 75; the CUDA backend needs compute capability 7.5 or newer])
  fi
  dyng_cuda_arch_list="$dyng_cuda_arch_list $dyng_a"
done
dyng_cuda_arch_list=`for dyng_a in $dyng_cuda_arch_list; do echo $dyng_a; done | sort -n -u | tr '\n' ' '`
if test "x$with_cuda" != xno && test -z "$dyng_cuda_arch_list"; then
  AC_MSG_ERROR([--with-cuda-arch: no compute capability given])
fi

# The main toolkit.
dyng_tk_nvcc=
AS_CASE([$with_cuda],
  [no], [],
  [yes|check], [
    AC_PATH_PROG([NVCC], [nvcc])
    dyng_tk_nvcc=$NVCC
    if test -z "$dyng_tk_nvcc"; then
      for dyng_d in "$CUDA_HOME" "$CUDA_PATH" /usr/local/cuda; do
        if test -n "$dyng_d" && test -x "$dyng_d/bin/nvcc"; then
          dyng_tk_nvcc=$dyng_d/bin/nvcc
          break
        fi
      done
    fi],
  [dyng_tk_nvcc=$with_cuda/bin/nvcc])
AC_MSG_CHECKING([for the CUDA toolkit of the backend plugin])
dyng_cuda_why_main=
if test "x$with_cuda" = xno; then
  dyng_cuda_why_main="--with-cuda=no"
  AC_MSG_RESULT([no (--with-cuda=no)])
elif test -z "$dyng_tk_nvcc"; then
  dyng_cuda_why_main="no nvcc on PATH, in \$CUDA_HOME, \$CUDA_PATH or /usr/local/cuda"
  AS_IF([test "x$with_cuda" = xcheck], [AC_MSG_RESULT([no])],
    [AC_MSG_ERROR([--with-cuda: nvcc not found on PATH, in \$CUDA_HOME, \$CUDA_PATH or /usr/local/cuda])])
else
  dyng_cuda_probe
  if test -z "$dyng_tk_error"; then
    dyng_cuda_add
  elif test "x$with_cuda" = xcheck; then
    dyng_cuda_why_main=$dyng_tk_error
    AC_MSG_RESULT([no])
    AC_MSG_WARN([$dyng_tk_error: no CUDA plugin is built])
  else
    AC_MSG_ERROR([--with-cuda: $dyng_tk_error])
  fi
fi

# One more plugin per extra toolkit; these were asked for, so each must work.
if test -n "$with_cuda_extra" && test "x$with_cuda" = xno; then
  AC_MSG_ERROR([--with-cuda-extra cannot be used with --with-cuda=no])
fi
for dyng_d in `AS_ECHO(["$with_cuda_extra"]) | tr ',' ' '`; do
  AC_MSG_CHECKING([for the extra CUDA toolkit in $dyng_d])
  case $dyng_d in
    clang:*)
      dyng_tk_root=${dyng_d#clang:}
      dyng_cuda_probe_clang;;
    *)
      dyng_tk_nvcc=$dyng_d/bin/nvcc
      dyng_cuda_probe;;
  esac
  if test -n "$dyng_tk_error"; then
    AC_MSG_ERROR([--with-cuda-extra: $dyng_tk_error])
  fi
  dyng_cuda_add
done
rm -rf conftest.cuda

AC_SUBST([DYNG_CUDA_TOOLKITS])
AM_CONDITIONAL([DYNG_CUDA], [test -n "$DYNG_CUDA_TOOLKITS"])
])

# DYNG_CUDA_SUMMARY: the block at the end of configure's output (see the
# head of this file).  The reason a line is not built: what the main
# toolkit's search found instead, and how that line is built (CUDA 12 by
# clang with a root made from PyPI's wheels, cuda/README.md).
AC_DEFUN([DYNG_CUDA_SUMMARY], [
dyng_cuda_root12="${XDG_CACHE_HOME:-$HOME/.cache}/dyng/cuda-12.9"
dyng_cuda_lines=13
for dyng_m in 12 $dyng_cuda_majors; do
  case " $dyng_cuda_lines " in *" $dyng_m "*) ;; *) dyng_cuda_lines="$dyng_cuda_lines $dyng_m";; esac
done
AS_ECHO([""])
AS_ECHO(["CUDA plugins (cuda/README.md):"])
for dyng_m in $dyng_cuda_lines; do
  eval "dyng_s=\$dyng_cuda_built_$dyng_m"
  if test -n "$dyng_s"; then
    dyng_s="yes ($dyng_s)"
  else
    if test -n "$dyng_cuda_why_main"; then
      dyng_s=$dyng_cuda_why_main
    else
      dyng_s="the toolkit --with-cuda found is CUDA `echo $dyng_cuda_majors | cut -d' ' -f1`, and no --with-cuda-extra gave CUDA $dyng_m"
    fi
    case $with_cuda:$dyng_m in
      no:*) ;;
      *:12)
        dyng_s="$dyng_s; CUDA 12 needs --with-cuda-extra=clang:DIR, DIR a CUDA root made by cuda/toolkit-from-wheels.sh"
        if test -d "$dyng_cuda_root12"; then
          dyng_s="$dyng_s ($dyng_cuda_root12 is one, made by .ci/install-deps)"
        else
          dyng_s="$dyng_s (.ci/install-deps makes one in $dyng_cuda_root12; it is not there)"
        fi
        case $CUDA_CLANG in
          /*) test -x "$CUDA_CLANG";;
          *) command -v "$CUDA_CLANG" >/dev/null 2>&1;;
        esac || dyng_s="$dyng_s, and CUDA_CLANG=$CUDA_CLANG, which is not installed";;
      *)
        dyng_s="$dyng_s; --with-cuda=DIR or --with-cuda-extra=DIR naming a CUDA $dyng_m toolkit builds it";;
    esac
    dyng_s="no ($dyng_s)"
  fi
  AS_ECHO(["  dyng_cuda$dyng_m.so: $dyng_s"])
  _AS_ECHO_LOG([summary: dyng_cuda$dyng_m.so: $dyng_s])
done
])
