#!/usr/bin/env bash
# A/B timing of two revisions of package sim on a noisy machine: builds the
# test binary of REV_A and of the working tree, then runs one benchmark
# alternately, N pairs, and prints each pair's ratio (tree / REV_A) and the
# median ratio. Adjacent runs share the machine's state, so the median of
# pair ratios is steadier than comparing two series of absolute times.
# BENCH case:NAME times one case of the SimGrid comparison instead (gpusim
# alone, TestSimGridSpeed's -sim.speed NAME), in seconds. Pair ratios are
# noisier than they look on this VM: rounds.sh, with a copy of one binary
# as a reference, is the better test of a small effect.
#
#   sim/testdata/ab/ab.sh REV_A BENCH [N]     e.g.  ab.sh HEAD 'Flows$' 9
#   sim/testdata/ab/ab.sh HEAD case:499-links-10000-flows 3
set -euo pipefail
rev=${1:?usage: ab.sh REV_A BENCH [N]}
bench=${2:?usage: ab.sh REV_A BENCH [N]}
n=${3:-9}
. "$(dirname "$0")/binaries.sh"
unit=ns
run() { GOMAXPROCS=1 "$1" -test.run '^$' -test.bench "$bench" -test.benchtime 1x | awk '/^Benchmark/ {print $3; exit}'; }
if [[ $bench == case:* ]]; then
	unit=s
	run() { (cd "$top/sim" && GOMAXPROCS=1 "$1" -test.run '^TestSimGridSpeed$' -sim.speed "${bench#case:}" -sim.speed-simgrid=false | awk -v c="${bench#case:}" '$1 == c {print $3}'); }
fi
ratios=()
for i in $(seq "$n"); do
	a=$(run "$tmp/a.test")
	b=$(run "$tmp/b.test")
	r=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
	echo "pair $i: A $a $unit, B $b $unit, B/A $r"
	ratios+=("$r")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{r[NR] = $1} END {m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2; printf "median B/A over %d pairs: %.3f\n", NR, m}'
