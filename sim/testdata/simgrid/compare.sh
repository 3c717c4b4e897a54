#!/bin/sh
# Times gpusim's flow solver and SimGrid's on the benchmark cases of
# sim/speed_test.go, side by side, and prints the ratio of their times and the
# largest relative difference between their finish times. Needs Go, g++ and
# libsimgrid-dev (apt-get install -y libsimgrid-dev g++).
#   compare.sh                       every case
#   compare.sh 249-links-2000-flows  the cases named (comma-separated)
set -e
cd "$(dirname "$0")/../../.."
cases=${1:-all}
go test ./sim -run '^TestSimGridSpeed$' -sim.speed "$cases" -timeout 3h -v | grep -v '^=== \|^--- \|^PASS\|^ok '
