#!/usr/bin/env bash
# The GPU check of issue 6, in two halves.
#
#   hw/devicecheck/run.sh build            on the development machine (Go
#                                          installed): builds a linux/amd64
#                                          gpusim into hw/devicecheck/bin/,
#                                          and one without cgo for hosts
#                                          with an older glibc
#   hw/devicecheck/run.sh device OUTDIR [TARBALL]
#                                          on a machine with an NVIDIA GPU and
#                                          no Go toolchain, from the repository
#                                          root: discover, check the kernels
#                                          (ptx-check), calibrate --quick,
#                                          replay the single-GPU hardware
#                                          scenarios; everything into OUTDIR
#                                          (a new or empty folder),
#                                          and packed into TARBALL (.tgz) after
#                                          every step, where given
#   hw/devicecheck/run.sh rehearse OUTDIR [TARBALL]
#                                          here, without a GPU: the device half
#                                          against the C stand-in for libcuda
#                                          (internal/fakecuda), to check the
#                                          script and the binary end to end
#                                          before spending GPU minutes (its
#                                          discover fails: no NVML; the exit
#                                          status is that of the rest); it
#                                          builds first
#
# The device half takes well under 8 minutes (about a minute on one H200).
# It runs every step whatever the ones before did, each within a time limit
# (a driver call that never returns costs that step, not the run), but for
# the steps after one that hung (stopped at its limit) and those past a
# deadline (DEADLINE, 440 s after the start), which it skips; it exits 1 if
# any failed or was skipped (each step's exit status is in OUTDIR/log.txt).
#
# With this workplace's device tool, which brings back at most 8 files from
# $OUT: build here, then one call of
#   run(command: "hw/devicecheck/run.sh device /tmp/o $OUT/measured.tgz",
#       carry: ["hw/devicecheck/bin"], timeout_s: 480)
# and unpack measured.tgz into docs/measured/DATE-GPU/ (the tarball holds
# everything written so far, even if the call is stopped at its limit);
# `python3 hw/devicecheck/summarize.py docs/measured/DATE-GPU/o` prints its
# replays as a table for the folder's README.
# It never changes clocks, power or any other GPU setting. Commit what it
# writes under docs/measured/DATE-GPU/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
build)
	cd "$here/../.." || exit 1
	mkdir -p hw/devicecheck/bin
	# The commit, for `gpusim version` in machine.txt (the device gets no .git).
	rev=$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
	ld="-X main.buildRevision=$rev"
	# cgo for NVML (go-nvml); the CUDA driver is reached through purego.
	CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "$ld" -o hw/devicecheck/bin/gpusim ./cmd/gpusim || exit 1
	# Without cgo: needs no glibc of any version, for a GPU host whose glibc
	# is older than this machine's; it has no NVML, so no `topo discover`
	# (calibrate then describes the GPUs from the CUDA driver alone).
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "$ld" -o hw/devicecheck/bin/gpusim-nocgo ./cmd/gpusim || exit 1
	ls -l hw/devicecheck/bin/
	if command -v objdump >/dev/null; then
		need=$(objdump -T hw/devicecheck/bin/gpusim | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
		if [ -n "$need" ]; then
			echo "bin/gpusim needs glibc ${need#GLIBC_} or newer on the GPU host; where it cannot start, the device half uses bin/gpusim-nocgo"
		fi
	fi
	echo "built at $rev"
	;;
device)
	out=${2:?usage: run.sh device OUTDIR [TARBALL]}
	tarball=${3:-}
	case "$tarball" in
	"" | /*) ;;
	*) tarball="$PWD/$tarball" ;;
	esac
	# Per step: calibrate's budget is 4 minutes; a replay takes seconds.
	calibrate_limit=${CALIBRATE_LIMIT:-300}
	step_limit=${STEP_LIMIT:-120}
	# The whole: within the device tool's 480 s, with room to pack. Steps
	# past it are skipped, and so are all steps after one that hung (a
	# wedged GPU would cost each of them its whole limit).
	case "${DEADLINE:-440}" in
	'' | *[!0-9]*)
		echo "run.sh: DEADLINE=$DEADLINE: want whole seconds, such as 440" >&2
		exit 2
		;;
	esac
	deadline=$(($(date +%s) + ${DEADLINE:-440}))
	hung=""
	# An empty OUTDIR: files of an earlier run would pass for this one's
	# (in the tarball, and in summarize.py's table).
	if [ -d "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
		echo "run.sh: OUTDIR $out is not empty: give a new or empty folder (an earlier run's files would pass for this one's)" >&2
		exit 2
	fi
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	case "$tarball" in
	"$out"/*)
		echo "run.sh: the tarball $tarball is inside OUTDIR $out: give it a path outside (tar would pack it into itself)" >&2
		exit 2
		;;
	esac
	g="$here/bin/gpusim"
	log="$out/log.txt"
	failed=0
	: >"$log"
	if [ ! -x "$g" ]; then
		echo "run.sh: no executable $g: run \`hw/devicecheck/run.sh build\` on a machine with Go first, and carry hw/devicecheck/bin" >&2
		exit 2
	fi
	if [ -n "${GPUSIM_REHEARSAL:-}" ]; then
		echo "== rehearsal: the GPU is a stand-in (internal/fakecuda) whose copies and kernels take no real time; its numbers mean nothing, only the exit statuses do" | tee -a "$log"
	fi
	if ! why=$("$g" version 2>&1 >/dev/null); then
		# Typically "GLIBC_2.34 not found": an older glibc than the build machine's.
		echo "== $g does not start here ($(echo "$why" | head -n 1)); using bin/gpusim-nocgo (no NVML: no topo discover)" | tee -a "$log"
		g="$here/bin/gpusim-nocgo"
		if ! [ -x "$g" ] || ! "$g" version >/dev/null 2>&1; then
			echo "run.sh: neither bin/gpusim nor bin/gpusim-nocgo starts here: run \`hw/devicecheck/run.sh build\` again (it builds both) and carry hw/devicecheck/bin" | tee -a "$log" >&2
			exit 2
		fi
	fi
	pack() { # the tarball of what is written so far, where one is asked for
		[ -n "$tarball" ] || return 0
		tar czf "$tarball.part" -C "$(dirname "$out")" "$(basename "$out")" && mv "$tarball.part" "$tarball"
	}
	step() { # step NAME COMMAND...: run, log, keep going (counting failures)
		local name=$1
		shift
		echo "== $name: $*" | tee -a "$log"
		local t0=$(date +%s%N)
		# SIGTERM at the limit: gpusim frees the GPU and exits; KILL 10 s on.
		local limit=$step_limit
		[ "$name" = calibrate ] && limit=$calibrate_limit
		local left=$((deadline - $(date +%s) - 10))
		if [ -n "$hung" ] || [ $left -lt 10 ]; then
			if [ -n "$hung" ]; then
				echo "   skipped: $hung hung (stopped at its limit); a GPU that stopped answering would hold every step to its limit" | tee -a "$log"
			else
				echo "   skipped: past the run's deadline (DEADLINE, ${DEADLINE:-440} s after the start)" | tee -a "$log"
			fi
			failed=$((failed + 1))
			return 125
		fi
		local cut=""
		if [ $limit -gt $left ]; then
			limit=$left
			cut=" (cut to what was left before the deadline)"
		fi
		local limited=""
		if command -v timeout >/dev/null; then
			limited=1
			timeout -k 10 "$limit" "$@" >"$out/$name.txt" 2>"$out/$name.err"
		else
			"$@" >"$out/$name.txt" 2>"$out/$name.err"
		fi
		local rc=$?
		local t1=$(date +%s%N)
		# Stopped at its limit only if it ran that long: timeout passes on
		# the command's own status, and the OOM killer's KILL is 137 too.
		local ran=$(((t1 - t0) / 1000000000))
		if [ -n "$limited" ] && [ $ran -ge $limit ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
			if [ $rc -eq 124 ]; then
				echo "   stopped at its limit of $limit s$cut" | tee -a "$log"
			else
				echo "   killed 10 s after its limit of $limit s$cut (it did not stop on TERM)" | tee -a "$log"
			fi
			# It hung (a replay takes seconds, and calibrate's budget is
			# well within its limit), unless the deadline cut its limit:
			# the later steps are past the deadline anyway.
			[ -z "$cut" ] && hung=$name
		elif [ $rc -eq 137 ]; then
			echo "   killed (signal 9) before any limit: out of memory?" | tee -a "$log"
		fi
		echo "   exit $rc in $(((t1 - t0) / 1000000)) ms" | tee -a "$log"
		tail -n 5 "$out/$name.err" | sed 's/^/   /' | tee -a "$log"
		if [ $rc -ne 0 ]; then
			if [ "$name" = discover ] && [ $rc -eq 3 ] && [ -n "${GPUSIM_REHEARSAL:-}" ]; then
				echo "   (expected in a rehearsal: the stand-in has no NVML)" | tee -a "$log"
			else
				failed=$((failed + 1))
			fi
		fi
		pack
		return $rc
	}
	limited() { # limited SECONDS COMMAND...: where timeout exists
		if command -v timeout >/dev/null; then
			timeout -k 5 "$@"
		else
			shift
			"$@"
		fi
	}
	{
		date -u
		uname -a
		# A driver that does not answer holds nvidia-smi: 30 s each.
		limited 30 nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem,memory.total --format=csv
		limited 30 nvidia-smi topo -m
		# NUMA nodes and their CPUs: where the backend and calibration
		# place a host's threads and memory (docs/hardware.md).
		echo "NUMA nodes with CPUs: $(cat /sys/devices/system/node/has_cpu 2>/dev/null || echo unknown); CPUs this process may use: $(nproc)"
		for n in /sys/devices/system/node/node[0-9]*; do
			[ -r "$n/cpulist" ] && echo "${n##*/}: CPUs $(cat "$n/cpulist")"
		done
		"$g" version
	} >"$out/machine.txt" 2>&1
	pack # the machine's description comes back whatever happens next
	if [ "$g" = "$here/bin/gpusim" ]; then
		step discover "$g" topo discover -o "$out/discovered.yaml" --name discovered
	else
		echo "== discover: skipped (bin/gpusim-nocgo has no NVML)" | tee -a "$log"
	fi
	# The kernels, JIT-compiled by the driver and run once each (seconds):
	# the driver's JIT log if they fail, and the spin kernel's stamps over
	# one wave of blocks and over two.
	if [ -n "${GPUSIM_REHEARSAL:-}" ]; then
		echo "== ptx-check: skipped in a rehearsal (the stand-in runs no kernels)" | tee -a "$log"
	elif command -v python3 >/dev/null; then
		step ptx-check python3 "$here/../kernels/ptx_check.py" "$here/../kernels/kernels.ptx"
	else
		echo "== ptx-check: skipped (no python3)" | tee -a "$log"
	fi
	topo="$out/discovered.yaml"
	[ -s "$topo" ] || topo=""
	step calibrate "$g" calibrate --quick --budget 4m ${topo:+--topology "$topo"} -o "$out/calibrated.yaml"
	cal_rc=$?
	cal="$out/calibrated.yaml"
	if [ ! -s "$cal" ] && [ $cal_rc -ne 124 ] && [ $cal_rc -ne 137 ]; then
		# Diagnose the kernels (not a calibration stopped at its limit)
		# with ptxas where there is one (ptx-check above has the JIT log).
		command -v ptxas >/dev/null && step ptxas ptxas -arch=sm_90 "$here/../kernels/kernels.ptx" -o /dev/null
	fi
	[ -s "$cal" ] || cal=""
	for s in hw-copies hw-overlap hw-launch-bound hw-pageable hw-both-ways hw-memory; do
		# The table, the plots and replay.json (what --json prints), of
		# the same 11 runs.
		step "replay-$s" "$g" replay "$s" ${cal:+--topology "$cal"} --repeat 11 --top 8 --plot "$out/plots-$s"
		[ -e "$out/plots-$s/replay.json" ] && mv "$out/plots-$s/replay.json" "$out/replay-$s.json"
	done
	# On two sockets with four GPUs or more on the first (a DGX), those four
	# fed from each socket's memory: the backend places cpu1's threads and
	# memory on its NUMA node (docs/hardware.md), so the far socket's
	# copies cross the inter-socket link as the model has them.
	if [ -n "$cal" ] && grep -q 'name: cpu1[,}]' "$cal" && [ "$(grep -c 'host: cpu0[,}]' "$cal")" -ge 4 ]; then
		for from in cpu0 cpu1; do
			step "replay-numa-near-far-$from" "$g" replay numa-near-far --set from=$from --topology "$cal" --repeat 3 --top 8
		done
	fi
	# The launch-bound loop predicted with the host's time per op taken just
	# before each run (the host's speed drifts on a virtual machine).
	step replay-hw-launch-bound-probed "$g" replay hw-launch-bound --host-probe ${cal:+--topology "$cal"} --repeat 11 --top 8
	# The launch-bound loop with longer kernels: the GPU, not the host, bounds it.
	step replay-hw-launch-bound-20us "$g" replay hw-launch-bound --set kernel=20us ${cal:+--topology "$cal"} --repeat 11 --top 8
	# The same kernels queued before they start: is the gap between them
	# the feeding's or the timing events'?
	step replay-hw-queued "$g" replay hw-queued ${cal:+--topology "$cal"} --repeat 11 --top 8
	# A run of 1.6 s: event times past a second are refined (hw/eventtimes.go);
	# a warning in replay-hw-overlap-long.err says the driver's elapsed times
	# are not as that assumes.
	step replay-hw-overlap-long "$g" replay hw-overlap --set step=200ms ${cal:+--topology "$cal"} --repeat 3 --top 8
	# Events 20 us apart past 1.2 s, a chain of 200 for the refinement.
	step replay-hw-queued-long "$g" replay hw-queued --set hold=1200ms ${cal:+--topology "$cal"} --repeat 3 --top 8
	echo "== done, $failed step(s) failed" | tee -a "$log"
	pack
	[ $failed -eq 0 ] # the exit status says whether everything ran
	;;
rehearse)
	out=${2:?usage: run.sh rehearse OUTDIR [TARBALL]}
	"$0" build || exit 1 # rehearse the binary of this tree, not an older one
	lib=$(mktemp -d)
	trap 'rm -rf "$lib"' EXIT
	${CC:-cc} -shared -fPIC -O2 -pthread -o "$lib/libcuda.so.1" "$here/../../internal/fakecuda/testdata/fakecuda.c" || exit 1
	LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKECUDA_REALCLOCK=1 GPUSIM_REHEARSAL=1 "$0" device "$out" "${3:-}"
	;;
*)
	echo "usage: $0 build | device OUTDIR [TARBALL] | rehearse OUTDIR [TARBALL]" >&2
	exit 2
	;;
esac
