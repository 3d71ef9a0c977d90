#!/bin/sh
# bench/plot.sh: the plots of docs/performance.md, from the benchmarks' output.
#
#   bench/plot.sh LOG...
#
# Collects every `BENCH db=... metric=... ...` line of the given logs (the
# output of bench_dyn, bench_gpu, ...) into bench/results/bench.csv (db,
# metric, unit, median, min, max, n, ratio), then draws with gnuplot (Debian:
# gnuplot-nox):
#   docs/img/tree_update.svg  a kept tree's update against recomputing it, by
#                             batch size (bench_dyn: the grid with local
#                             inserts and R-MAT 20), log-log;
#   docs/img/gpu.svg          CPU against CUDA (bench_gpu): SSSP from scratch
#                             and the three kept trees' update, per graph;
#   docs/img/peers.svg        dyng and the peers (bench_peers, the grid):
#                             one-to-all, point-to-point, the answer after
#                             deleting an edge.
# Run from the top of the source tree.
set -eu
command -v gnuplot >/dev/null || { echo "bench/plot.sh: gnuplot is needed (apt-get install gnuplot-nox)" >&2; exit 1; }
mkdir -p bench/results docs/img
csv=bench/results/bench.csv
echo "db,metric,unit,median,min,max,n,ratio" > "$csv"
cat "$@" | awk '/^BENCH / {
    db = ""; metric = ""; unit = ""; med = ""; mn = ""; mx = ""; n = ""; ratio = "";
    for (i = 2; i <= NF; i++) {
      split($i, kv, "=");
      if (kv[1] == "db") db = kv[2]; else if (kv[1] == "metric") metric = kv[2];
      else if (kv[1] == "unit") unit = kv[2]; else if (kv[1] == "median") med = kv[2];
      else if (kv[1] == "min") mn = kv[2]; else if (kv[1] == "max") mx = kv[2];
      else if (kv[1] == "n") n = kv[2]; else if (kv[1] == "ratio") ratio = kv[2];
    }
    print db "," metric "," unit "," med "," mn "," mx "," n "," ratio
  }' | sort -u >> "$csv"

# Batch sizes from names: update_1k -> 1000.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for db in grid1000.db+local rmat20.db; do
  awk -F, -v db="$db" '$1 == db && $2 ~ /^(update|recompute)_[0-9]+[km]?$/ {
      split($2, p, "_"); s = p[2]; m = 1;
      if (s ~ /k$/) { m = 1000; sub(/k$/, "", s) } else if (s ~ /m$/) { m = 1000000; sub(/m$/, "", s) }
      print p[1], s * m, $4 }' "$csv" | sort -k1,1 -k2,2n > "$tmp/$db"
  grep '^update ' "$tmp/$db" | cut -d' ' -f2- > "$tmp/$db.update" || true
  grep '^recompute ' "$tmp/$db" | cut -d' ' -f2- > "$tmp/$db.recompute" || true
done
gnuplot <<GP
set terminal svg size 720,420 font "sans,12"
set output "docs/img/tree_update.svg"
set title "Updating a kept shortest-path tree against recomputing it (one thread)"
set logscale xy
set xlabel "changes in the batch (half inserts, half deletes)"
set ylabel "ms (median)"
set key bottom right
set grid
plot "$tmp/grid1000.db+local.update" using 1:2 with linespoints lw 2 title "grid 1000x1000, update", \
     "$tmp/grid1000.db+local.recompute" using 1:2 with linespoints dt 2 title "grid, recompute", \
     "$tmp/rmat20.db.update" using 1:2 with linespoints lw 2 title "R-MAT 20, update", \
     "$tmp/rmat20.db.recompute" using 1:2 with linespoints dt 2 title "R-MAT 20, recompute"
GP

# A clustered bar chart on a log scale: bars OUT TITLE YLABEL KEY PLOT.
bars() {
  gnuplot <<GP
set terminal svg size 720,420 font "sans,12"
set output "$1"
set title "$2"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "$3"
set grid ytics
set xtics noenhanced
set key $4
plot $5
GP
}

# CPU against CUDA, per graph: SSSP from scratch, three trees after 50K changes.
for db in grid2m.db rmat21.db rmat22.db; do
  get() { awk -F, -v db="$db" -v m="$1" '$1 == db && $2 == m { print $4 }' "$csv"; }
  case $db in grid2m.db) name=grid;; rmat21.db) name="R-MAT 21";; *) name="R-MAT 22";; esac
  echo "\"$name: SSSP\" $(get sssp_cpu) $(get sssp_cuda)" >> "$tmp/gpu"
  echo "\"$name: 3 trees\" $(get trees_cpu_50k) $(get trees_cuda_50k)" >> "$tmp/gpu"
done
bars docs/img/gpu.svg "CPU backend against CUDA (one H200): from scratch, and after a 50K batch" \
  "ms (median)" "top right" "\"$tmp/gpu\" using 2:xtic(1) title \"CPU\", \"\" using 3 title \"CUDA\""
# The peers on the grid: bench_peers writes ms as ratio lines.
for peer in dyng igraph__C_ NetworkX; do
  get() { awk -F, -v m="$1_$peer" '$1 == "grid1000.db" && $2 == m { print $8 }' "$csv"; }
  case $peer in igraph__C_) name="igraph (C)";; *) name=$peer;; esac
  echo "\"$name\" $(get sssp) $(get p2p) $(get update)" >> "$tmp/peers"
done
bars docs/img/peers.svg "1000x1000 grid: dyng and the peers that answered right" "ms" "top left" \
  "\"$tmp/peers\" using 2:xtic(1) title \"one-to-all\", \"\" using 3 title \"point-to-point\", \"\" using 4 title \"after deleting an edge on the path\""
echo "bench/plot.sh: wrote $csv, docs/img/tree_update.svg, docs/img/gpu.svg, docs/img/peers.svg"
