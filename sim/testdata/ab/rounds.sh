#!/usr/bin/env bash
# Timing of several revisions of package sim in interleaved rounds, with a
# noise reference: builds the test binary of each REV (the word "tree" for
# the working tree) and a second copy of the first one's, then runs one
# benchmark (or one case of the SimGrid comparison) with every binary in
# each round, in an order that rotates from round to round. It prints, for
# each, the median over rounds of its time divided by the first binary's
# time in the same round, and its median and least time. The copy's line
# shows what identical code measures as (on this VM, ratios of 0.98-1.09
# over 15 rounds): read a revision's ratio against that, not against 1.
# Pairs of two binaries (ab.sh) claimed gains here that rounds with a
# reference did not confirm.
#
#   sim/testdata/ab/rounds.sh BENCH ROUNDS REV...
#   sim/testdata/ab/rounds.sh 'Engine$' 21 c84fcfd HEAD tree
#   sim/testdata/ab/rounds.sh case:499-links-2000-flows 15 c84fcfd tree
set -euo pipefail
bench=${1:?usage: rounds.sh BENCH ROUNDS REV...}
rounds=${2:?usage: rounds.sh BENCH ROUNDS REV...}
shift 2
(($# > 0)) || { echo "usage: rounds.sh BENCH ROUNDS REV..." >&2; exit 2; }
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; git -C "$top" worktree prune' EXIT
names=()
for rev in "$@"; do
	name=$rev
	if [[ $rev == tree ]]; then
		(cd "$top" && go test -c -o "$tmp/$name.test" ./sim)
	else
		name=$(git -C "$top" rev-parse --short "$rev")
		git -C "$top" worktree add -q --detach "$tmp/wt" "$rev"
		(cd "$tmp/wt" && go test -c -o "$tmp/$name.test" ./sim)
		git -C "$top" worktree remove --force "$tmp/wt"
	fi
	names+=("$name")
done
cp "$tmp/${names[0]}.test" "$tmp/${names[0]}-copy.test"
names=("${names[0]}" "${names[0]}-copy" "${names[@]:1}")
run() {
	if [[ $bench == case:* ]]; then
		(cd "$top/sim" && GOMAXPROCS=1 "$1" -test.run '^TestSimGridSpeed$' -sim.speed "${bench#case:}" -sim.speed-simgrid=false |
			awk -v c="${bench#case:}" '$1 == c {print $3}')
	else
		(cd "$top/sim" && GOMAXPROCS=1 "$1" -test.run '^$' -test.bench "$bench" -test.benchtime 1x |
			awk '/^Benchmark/ {print $3 / 1e9; exit}')
	fi
}
n=${#names[@]}
for ((i = 0; i < rounds; i++)); do
	for ((j = 0; j < n; j++)); do
		name=${names[$(((i + j) % n))]}
		echo "$i $name $(run "$tmp/$name.test")" >>"$tmp/times"
	done
done
awk -v list="${names[*]}" '
	{ t[$2, $1] = $3 }
	END {
		k = split(list, names, " ")
		for (x = 1; x <= k; x++) {
			m = 0
			for (i = 0; (names[1], i) in t; i++) {
				r[++m] = t[names[x], i] / t[names[1], i]
				s[m] = t[names[x], i]
			}
			sort(r, m); sort(s, m)
			printf "%-16s median ratio %.3f   median %.4g s   least %.4g s\n", names[x], med(r, m), med(s, m), s[1]
		}
	}
	function sort(a, m,   i, j, v) { for (i = 2; i <= m; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v } }
	function med(a, m) { return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
' "$tmp/times"
