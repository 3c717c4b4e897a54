#!/usr/bin/env bash
# Noise-free A/B of two revisions of package sim: builds the test binary of
# REV_A and of the working tree and runs one benchmark (or one case of the
# SimGrid comparison) in each under valgrind's cachegrind, with the
# collector off (GOGC=off: its work depends on timing), and prints the
# instructions, first-level data misses and last-level misses of each and
# their ratios (tree / REV_A). The last level is modelled as 2 MiB, the L2
# of a core of the development machine: in the large flow cases the solver
# waits on what spills from it. Counts are the same from run to run, where
# the VM's timings move by up to 2x; they do not weigh a miss against an
# instruction, so read them beside ab.sh's times.
#
#   sim/testdata/ab/cg.sh REV_A BENCH            e.g.  cg.sh HEAD 'Flows$'
#   sim/testdata/ab/cg.sh HEAD case:499-links-2000-flows
set -euo pipefail
rev=${1:?usage: cg.sh REV_A BENCH}
bench=${2:?usage: cg.sh REV_A BENCH}
command -v valgrind >/dev/null || { echo "cg.sh: needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }
. "$(dirname "$0")/binaries.sh"
args=(-test.run '^$' -test.bench "$bench" -test.benchtime 1x)
if [[ $bench == case:* ]]; then
	args=(-test.run '^TestSimGridSpeed$' -sim.speed "${bench#case:}" -sim.speed-simgrid=false)
fi
count() {
	(cd "$top/sim" && GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=yes --LL=2097152,16,64 \
		--cachegrind-out-file=/dev/null "$1" "${args[@]}" 2>&1 >/dev/null) |
		awk '/ I +refs:/ {gsub(",", "", $4); i = $4} / D1 +misses:/ {gsub(",", "", $4); d = $4} / LL misses:/ {gsub(",", "", $4); l = $4} END {print i, d, l}'
}
read -r ia da la < <(count "$tmp/a.test")
read -r ib db lb < <(count "$tmp/b.test")
awk -v ia="$ia" -v da="$da" -v la="$la" -v ib="$ib" -v db="$db" -v lb="$lb" 'BEGIN {
	printf "%-14s %16s %16s %8s\n", "", "A", "B", "B/A"
	printf "%-14s %16.0f %16.0f %8.3f\n", "instructions", ia, ib, ib / ia
	printf "%-14s %16.0f %16.0f %8.3f\n", "D1 misses", da, db, db / da
	printf "%-14s %16.0f %16.0f %8.3f\n", "LL (2M) misses", la, lb, lb / la
}'
