#!/usr/bin/env bash
# A/B timing of two revisions of the flow solver on one SimGrid-comparison
# case (sim/speed_test.go's TestSimGridSpeed, gpusim alone, one core): builds
# the test binary of REV_A and of the working tree, runs the case alternately,
# N pairs, and prints each pair's times and ratio (tree / REV_A).
#
#   sim/testdata/ab/abcase.sh REV_A CASE [N]    e.g.  abcase.sh HEAD 499-links-10000-flows 3
set -euo pipefail
rev=${1:?usage: abcase.sh REV_A CASE [N]}
c=${2:?usage: abcase.sh REV_A CASE [N]}
n=${3:-3}
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$tmp/a" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$top" worktree add -q --detach "$tmp/a" "$rev"
(cd "$tmp/a" && go test -c -o "$tmp/a.test" ./sim)
(cd "$top" && go test -c -o "$tmp/b.test" ./sim)
run() { (cd "$top/sim" && GOMAXPROCS=1 "$1" -test.run '^TestSimGridSpeed$' -sim.speed "$c" -sim.speed-simgrid=false | awk -v c="$c" '$1 == c {print $3}'); }
for i in $(seq "$n"); do
	a=$(run "$tmp/a.test")
	b=$(run "$tmp/b.test")
	echo "pair $i: A $a s, B $b s, B/A $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')"
done
