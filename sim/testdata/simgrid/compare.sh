#!/bin/sh
# Times gpusim's flow solver and SimGrid's on the benchmark cases of
# sim/speed_test.go, side by side, and prints the ratio of their times and the
# largest relative difference between their finish times. Needs Go, g++ and
# libsimgrid-dev (apt-get install -y libsimgrid-dev g++).
#   compare.sh                         every case
#   compare.sh 249-links-2000-flows    the cases named (comma-separated)
#   compare.sh 249-links-2000-flows 5  each case 5 times, the engines alternating:
#                                      medians (SimGrid is not repeated past -sim.speed-limit)
set -e
cd "$(dirname "$0")/../../.."
cases=${1:-all}
go test ./sim -run '^TestSimGridSpeed$' -sim.speed "$cases" -sim.speed-repeat "${2:-1}" -timeout 3h -v | grep -v '^=== \|^--- \|^PASS\|^ok '
