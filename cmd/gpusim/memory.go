package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"gpusim/internal/units"
	"gpusim/models"
	"gpusim/scenarios"
	"gpusim/sim"
)

// bytesPerOp is what simulating one op takes in memory, its records and
// the run's state at their peak: 0.9 KB of peak RSS an op for a million
// 1 us kernels on pcie-2gpu (/usr/bin/time -f %M, 2026-11-30), and about as
// much for a pipelined training's ops (a review measured 0.8 KB).
const bytesPerOp = 1 << 10

// memoryCheckFloor is the need below which a run is never refused: the
// estimate is rough, and what the system says is free moves.
var memoryCheckFloor uint64 = 256 << 20

// freeMemory returns the memory this process may still use, where the
// system says: MemAvailable of /proc/meminfo, and below it the room left
// under a cgroup v2 limit (memory.max less memory.current) and under a
// limit on the address space (ulimit -v). ok is false where none is known
// (other systems than Linux).
var freeMemory = func() (free uint64, ok bool) {
	free, ok = systemFree()
	// Under a limit on the address space, the heap has half the room: Go
	// maps its heap in 64 MiB arenas with its metadata beside them, a
	// growing list holds its old and new arrays at once, and glibc
	// reserves stacks and arenas for cgo's threads, all of which count
	// against the limit (the full room, and three quarters of it, let runs
	// and plans the checks passed die at the limit, "fatal error: out of
	// memory").
	if room, known := addressRoom(); known && (!ok || room/2 < free) {
		free, ok = room/2, true
	}
	return free, ok
}

// freeHostMemory is the memory free for the hw backend's host buffers of
// copies: as freeMemory, but with the whole room under a limit on the
// address space (the buffers are mapped once, not grown as the heap is).
var freeHostMemory = func() (free uint64, ok bool) {
	free, ok = systemFree()
	if room, known := addressRoom(); known && (!ok || room < free) {
		free, ok = room, true
	}
	return free, ok
}

// systemFree is MemAvailable of /proc/meminfo, and below it the room left
// under a cgroup v2 limit (memory.max less memory.current); ok is false
// where neither is known.
func systemFree() (free uint64, ok bool) {
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if rest, found := strings.CutPrefix(sc.Text(), "MemAvailable:"); found {
				if f := strings.Fields(rest); len(f) > 0 {
					if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
						free, ok = kb<<10, true
					}
				}
			}
		}
	}
	limit, err1 := os.ReadFile("/sys/fs/cgroup/memory.max")
	used, err2 := os.ReadFile("/sys/fs/cgroup/memory.current")
	if err1 == nil && err2 == nil {
		l, e1 := strconv.ParseUint(strings.TrimSpace(string(limit)), 10, 64) // "max": no limit
		u, e2 := strconv.ParseUint(strings.TrimSpace(string(used)), 10, 64)
		// The cgroup's page cache counts in memory.current, and the
		// kernel gives it back before it kills: room, not use.
		if stat, err := os.ReadFile("/sys/fs/cgroup/memory.stat"); err == nil {
			for _, line := range strings.Split(string(stat), "\n") {
				if rest, found := strings.CutPrefix(line, "file "); found {
					if f, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64); err == nil && f <= u {
						u -= f
					}
				}
			}
		}
		if e1 == nil && e2 == nil {
			room := uint64(0)
			if l > u {
				room = l - u
			}
			if !ok || room < free {
				free, ok = room, true
			}
		}
	}
	return free, ok
}

// checkMemory refuses a scenario whose run would need more memory than is
// free (the run would be killed, or die in the Go runtime, after minutes):
// an environment's failure, exit status 1.
func checkMemory(sc *scenarios.Scenario) error {
	free, ok := freeMemory()
	return checkMemoryIn(sc, free, ok)
}

// checkMemoryIn is checkMemory where free is free (if ok).
func checkMemoryIn(sc *scenarios.Scenario, free uint64, ok bool) error {
	if !ok {
		return nil
	}
	recs, ops := uint64(sc.Program.NumRecords()), uint64(sc.Program.NumOps())
	if need := memoryNeed(sc); need > free && need > memoryCheckFloor {
		if tasks := collTasks(sc.Program); satMulU(tasks, bytesPerTask) > satMulU(recs, bytesPerOp) {
			return &failError{fmt.Errorf("%s: its collectives' plans have %d transfers (a ring over n GPUs has 2n(n-1)), which with its %s need about %s to simulate; %s is free here: give its collectives fewer GPUs, or run where more memory is free", sc.File, tasks, plural(int(min(ops, math.MaxInt32)), "1 op", "%d ops"), gib(need), gib(free))}
		}
		if recs > ops {
			return &failError{fmt.Errorf("%s expands to %d ops, %d records with each GPU's part of its collectives, which need about %s to simulate; %s is free here: lower its counts, or run where more memory is free", sc.File, ops, recs, gib(need), gib(free))}
		}
		return memoryFailure(sc.File, "", ops, free)
	}
	return nil
}

// bytesPerTask is what simulating one transfer of a collective's plan
// takes in memory, the plan's task and its state in the run: 0.52 KB of
// peak RSS a task for one ring all-reduce over 512 GPUs (523,264 tasks,
// 270 MB) and 0.59 KB over 1024 (2.1 million tasks, 1.2 GB) on an NVSwitch
// (/usr/bin/time -f %M, 2026-12-02). A ring over n GPUs has 2n(n-1) tasks:
// 18 million over 3000 GPUs.
const bytesPerTask = 640

// memoryNeed is about what simulating sc takes in memory. A collective
// issued for all its ranks keeps a record of each GPU's part, as much
// memory as an op each, and each transfer of its plan.
func memoryNeed(sc *scenarios.Scenario) uint64 {
	return satAddU(satMulU(uint64(sc.Program.NumRecords()), bytesPerOp), satMulU(collTasks(sc.Program), bytesPerTask))
}

// collTasks counts the tasks of p's collective plans, each plan once (the
// parts of a collective issued rank by rank share theirs).
func collTasks(p *sim.Program) uint64 {
	seen := map[*sim.CollPlan]bool{}
	n := uint64(0)
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			if c := p.Threads[ti].Ops[oi].Coll; c != nil && !seen[c] {
				seen[c] = true
				n += uint64(len(c.Tasks))
			}
		}
	}
	return n
}

// memoryGate keeps the points a sweep runs at once within the memory that
// was free when it started: a point takes its need before it runs, and
// gives it back after; one that needs more than there is waits for all
// the others. Points are checked against that memory too (check), not
// against what is free while others run, so that whether a point fits
// does not depend on -j. Where the free memory is unknown, the gate is
// open.
type memoryGate struct {
	mu          sync.Mutex
	cond        *sync.Cond
	left, total uint64
	known       bool
	// estimate is what a point holds while it loads, before its need is
	// known: the need of the point the sweep was read from (its first
	// that loads).
	estimate uint64
}

func newMemoryGate(estimate uint64) *memoryGate {
	g := &memoryGate{estimate: estimate}
	g.cond = sync.NewCond(&g.mu)
	g.total, g.known = freeMemory()
	g.left = g.total
	return g
}

// check is checkMemory against the memory free when the sweep started.
func (g *memoryGate) check(sc *scenarios.Scenario) error {
	return checkMemoryIn(sc, g.total, g.known)
}

// ops is memoryOps against the memory free when the sweep started.
func (g *memoryGate) ops() int64 { return memoryOpsIn(g.total, g.known) }

// take waits until need (at most the whole) is free, takes it and returns
// what it took, for give.
func (g *memoryGate) take(need uint64) uint64 {
	if !g.known {
		return 0
	}
	need = min(need, g.total)
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.left < need {
		g.cond.Wait()
	}
	g.left -= need
	return need
}

// resize turns what a point took to load into its need, if that is free
// at once, and returns what the point then holds. Otherwise it gives all
// back and returns false: the point is to drop what it loaded, take its
// need with nothing held (two points each holding part and waiting for
// more would wait forever) and load again.
func (g *memoryGate) resize(took, need uint64) (uint64, bool) {
	if !g.known {
		return 0, true
	}
	need = min(need, g.total)
	g.mu.Lock()
	defer g.cond.Broadcast()
	defer g.mu.Unlock()
	switch {
	case need <= took:
		g.left += took - need
	case g.left >= need-took:
		g.left -= need - took
	default:
		g.left += took
		return 0, false
	}
	return need, true
}

func (g *memoryGate) give(took uint64) {
	if took == 0 {
		return
	}
	g.mu.Lock()
	g.left += took
	g.mu.Unlock()
	g.cond.Broadcast()
}

// satAddU is a+b, at most the largest uint64.
func satAddU(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// satMulU is a*b, at most the largest uint64.
func satMulU(a, b uint64) uint64 {
	if b != 0 && a > math.MaxUint64/b {
		return math.MaxUint64
	}
	return a * b
}

// memoryOps is the most ops there is memory to simulate (checkMemory's
// bound), for the loader to refuse more before expanding them, as loading
// alone takes a fifth of that memory; 0 where the free memory is unknown.
func memoryOps() int64 {
	free, ok := freeMemory()
	return memoryOpsIn(free, ok)
}

// memoryOpsIn is memoryOps where free is free (if ok).
func memoryOpsIn(free uint64, ok bool) int64 {
	if !ok {
		return 0
	}
	return int64(min(max(free, memoryCheckFloor)/bytesPerOp, 1<<62))
}

// planFloor is the memory a plan may always take: 64 MiB, 134,000
// transfers (a 1 GiB ring all-reduce over 8 GPUs has a few thousand); more
// let a plan under a tight ulimit -v die before it reached its limit.
const planFloor = 64 << 20

// planTasksFor is the most transfers a collective's plan may have where
// memoryOps ops (memoryOps' bound, at bytesPerOp each) fit in the memory
// free: what that memory holds at models.PlanTaskBytes each, and at least
// what planFloor does; 0, no limit,
// where memoryOps is (the free memory unknown).
func planTasksFor(memoryOps int64) int {
	if memoryOps <= 0 {
		return 0
	}
	free := max(satMulU(uint64(memoryOps), bytesPerOp), planFloor)
	return int(min(free/models.PlanTaskBytes, math.MaxInt32))
}

// loadShare is how many times the memory a scenario's ops take once
// loaded a run of them takes: loading alone takes a fifth (see memoryOps).
const loadShare = 5

// expandOps is the most ops there is memory to load (validate expands
// every op to check it, and runs none): loadShare times memoryOps; 0
// where the free memory is unknown.
func expandOps() int64 {
	n := memoryOps()
	if n > math.MaxInt64/loadShare {
		return math.MaxInt64
	}
	return n * loadShare
}

// asLoadFailure is asMemoryFailure for validate, which only loads: a
// scenario of more ops than expandOps refused, exit 1; other errors pass
// through.
func asLoadFailure(err error, note string) error {
	if pe := (*scenarios.PlanMemoryError)(nil); errors.As(err, &pe) {
		return &failError{fmt.Errorf("%v%s", pe, note)}
	}
	var me *scenarios.MemoryError
	if errors.As(err, &me) {
		free, _ := freeMemory()
		return &failError{fmt.Errorf("%s expands to %d ops or more, which need about %s to load%s; %s is free here: lower its counts, or validate it where more memory is free",
			me.File, me.Ops, gib(satMulU(uint64(me.Ops), bytesPerOp/loadShare)), note, gib(free))}
	}
	return err
}

// memoryFailure is checkMemory's error, for a scenario of ops ops (at
// least, "or more").
func memoryFailure(file, atLeast string, ops, free uint64) *failError {
	return &failError{fmt.Errorf("%s expands to %d ops%s, which need about %s to simulate; %s is free here: lower its counts, or run where more memory is free", file, ops, atLeast, gib(satMulU(ops, bytesPerOp)), gib(free))}
}

// asMemoryFailure turns the loader's *scenarios.MemoryError into
// checkMemory's failure, with note after it; other errors pass through.
func asMemoryFailure(err error, note string) error {
	if pe := (*scenarios.PlanMemoryError)(nil); errors.As(err, &pe) {
		return &failError{fmt.Errorf("%v%s", pe, note)}
	}
	var me *scenarios.MemoryError
	if errors.As(err, &me) {
		free, _ := freeMemory()
		f := memoryFailure(me.File, " or more", uint64(me.Ops), free)
		f.err = fmt.Errorf("%v%s", f.err, note)
		return f
	}
	return err
}

func gib(b uint64) string { return units.Format(float64(b), units.Bytes) }
