#!/usr/bin/env bash
# The GPU check of issue 6, in two halves.
#
#   hw/devicecheck/run.sh build            on the development machine (Go
#                                          installed): builds a linux/amd64
#                                          gpusim into hw/devicecheck/bin/
#   hw/devicecheck/run.sh device OUTDIR    on a machine with an NVIDIA GPU and
#                                          no Go toolchain, from the repository
#                                          root: discover, calibrate --quick,
#                                          replay the single-GPU hardware
#                                          scenarios; everything into OUTDIR
#   hw/devicecheck/run.sh rehearse OUTDIR  here, without a GPU: the device half
#                                          against the C stand-in for libcuda
#                                          (internal/fakecuda), to check the
#                                          script and the binary end to end
#                                          before spending GPU minutes (its
#                                          discover fails: no NVML; the exit
#                                          status is that of the rest)
#
# The device half takes well under 8 minutes (about a minute on one H200).
# It runs every step whatever the ones before did, and exits 1 if any
# failed (each step's exit status is in OUTDIR/log.txt).
# It never changes clocks, power or any other GPU setting. Commit what it
# writes under docs/measured/DATE-GPU/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
build)
	cd "$here/../.." || exit 1
	mkdir -p hw/devicecheck/bin
	# cgo for NVML (go-nvml); the CUDA driver is reached through purego.
	CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -trimpath -o hw/devicecheck/bin/gpusim ./cmd/gpusim || exit 1
	ls -l hw/devicecheck/bin/gpusim
	;;
device)
	out=${2:?usage: run.sh device OUTDIR}
	mkdir -p "$out"
	g="$here/bin/gpusim"
	log="$out/log.txt"
	failed=0
	step() { # step NAME COMMAND...: run, log, keep going (counting failures)
		local name=$1
		shift
		echo "== $name: $*" | tee -a "$log"
		local t0=$(date +%s%N)
		"$@" >"$out/$name.txt" 2>"$out/$name.err"
		local rc=$?
		local t1=$(date +%s%N)
		echo "   exit $rc in $(((t1 - t0) / 1000000)) ms" | tee -a "$log"
		tail -n 5 "$out/$name.err" | sed 's/^/   /' | tee -a "$log"
		if [ $rc -ne 0 ]; then
			if [ "$name" = discover ] && [ $rc -eq 3 ] && [ -n "${GPUSIM_REHEARSAL:-}" ]; then
				echo "   (expected in a rehearsal: the stand-in has no NVML)" | tee -a "$log"
			else
				failed=$((failed + 1))
			fi
		fi
		return $rc
	}
	{
		date -u
		uname -a
		nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem,memory.total --format=csv
		nvidia-smi topo -m
		"$g" version
	} >"$out/machine.txt" 2>&1
	step discover "$g" topo discover -o "$out/discovered.yaml" --name discovered
	topo="$out/discovered.yaml"
	[ -s "$topo" ] || topo=""
	step calibrate "$g" calibrate --quick --budget 4m ${topo:+--topology "$topo"} -o "$out/calibrated.yaml"
	cal="$out/calibrated.yaml"
	if [ ! -s "$cal" ]; then
		# Diagnose the kernels: the driver's JIT log, and ptxas where there is one.
		command -v python3 >/dev/null && step ptx-check python3 "$here/../kernels/ptx_check.py" "$here/../kernels/kernels.ptx"
		command -v ptxas >/dev/null && step ptxas ptxas -arch=sm_90 "$here/../kernels/kernels.ptx" -o /dev/null
		cal=""
	fi
	for s in hw-copies hw-overlap hw-launch-bound hw-pageable; do
		step "replay-$s" "$g" replay "$s" ${cal:+--topology "$cal"} --repeat 11 --top 8 --plot "$out/plots-$s"
		"$g" replay "$s" ${cal:+--topology "$cal"} --repeat 11 --json >"$out/replay-$s.json" 2>/dev/null
	done
	# The launch-bound loop with longer kernels: the GPU, not the host, bounds it.
	step replay-hw-launch-bound-20us "$g" replay hw-launch-bound --set kernel=20us ${cal:+--topology "$cal"} --repeat 11 --top 8
	# A run of 1.6 s: event times past a second are refined (hw/eventtimes.go);
	# a warning in replay-hw-overlap-long.err says the driver's elapsed times
	# are not as that assumes.
	step replay-hw-overlap-long "$g" replay hw-overlap --set step=200ms ${cal:+--topology "$cal"} --repeat 3 --top 8
	echo "== done, $failed step(s) failed" | tee -a "$log"
	[ $failed -eq 0 ] # the exit status says whether everything ran
	;;
rehearse)
	out=${2:?usage: run.sh rehearse OUTDIR}
	lib=$(mktemp -d)
	trap 'rm -rf "$lib"' EXIT
	${CC:-cc} -shared -fPIC -O2 -pthread -o "$lib/libcuda.so.1" "$here/../../internal/fakecuda/testdata/fakecuda.c" || exit 1
	LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKECUDA_REALCLOCK=1 GPUSIM_REHEARSAL=1 "$0" device "$out"
	;;
*)
	echo "usage: $0 build | device OUTDIR | rehearse OUTDIR" >&2
	exit 2
	;;
esac
