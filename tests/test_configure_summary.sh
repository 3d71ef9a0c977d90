# tests/test_configure_summary.sh: configure's summary of the CUDA plugins
# (DYNG_CUDA_SUMMARY in cuda/cuda.m4) names each CUDA line, dyng_cuda13.so
# and dyng_cuda12.so, says "yes" exactly for those configure took (the
# majors of DYNG_CUDA_TOOLKITS in the Makefile) and gives each "no" its
# reason.  It reads the build folder's config.log; TAP output.
builddir=${DYNG_BUILDDIR:-.}
log=$builddir/config.log
n=0
failed=0
check () { # check CONDITION-STATUS NAME [DETAIL]
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"; failed=$((failed + 1))
    [ -n "$3" ] && printf '%s\n' "$3" | sed 's/^/# /'
  fi
}
if [ ! -f "$log" ] || [ ! -f "$builddir/Makefile" ]; then
  echo "1..0 # SKIP no config.log and Makefile in $builddir"
  exit 0
fi
taken=$(sed -n 's/^DYNG_CUDA_TOOLKITS = //p' "$builddir/Makefile" | tr ' ' '\n' | cut -d: -f1 | tr '\n' ' ' | sed 's/ *$//')
lines=$(grep '^configure:[0-9]*: summary: dyng_cuda' "$log" | sed 's/^configure:[0-9]*: summary: //')
for m in 13 12 $taken; do
  case " $done_majors " in *" $m "*) continue;; esac
  done_majors="$done_majors $m"
  line=$(printf '%s\n' "$lines" | grep "^dyng_cuda$m\.so: ")
  case " $taken " in
    *" $m "*) printf '%s\n' "$line" | grep -q "^dyng_cuda$m\.so: yes (CUDA $m, .*)$"; st=$?
              want=yes;;
    *) printf '%s\n' "$line" | grep -q "^dyng_cuda$m\.so: no (..*)$"; st=$?
       want="no, with the reason";;
  esac
  check $st "configure's summary: dyng_cuda$m.so: $want (configure took CUDA: ${taken:-none})" \
    "${line:-config.log has no summary line for dyng_cuda$m.so}"
done
echo "1..$n"
[ $failed = 0 ]
