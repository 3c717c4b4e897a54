package kernels

import (
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A small interpreter of the PTX that gpusim_copy and gpusim_spin use
// (integer moves and arithmetic, comparisons, predicated branches, 16-byte
// global loads and stores, 64-bit atomic min and max, %globaltimer), run
// one thread at a time over every thread of a launch: no GPU or ptxas here,
// but the copy's index arithmetic, its trips of four and its tail are
// checked for every element of sizes that use each, and the spin's
// stamps.

var (
	rePred   = regexp.MustCompile(`^@(!?)(%p\d+)\s+(.*)$`)
	reLoadV4 = regexp.MustCompile(`^\{([^}]*)\},\s*\[(%\w+)\]$`)
	reStorV4 = regexp.MustCompile(`^\[(%\w+)\],\s*\{([^}]*)\}$`)
)

type thread struct {
	params  map[string]uint64
	special map[string]uint64
	mem     map[uint64]uint32 // 4-byte words
	mem64   map[uint64]uint64 // 8-byte words of the atomics
	reg     map[string]uint64
	// clock is what %globaltimer reads, advancing tick at each read.
	clock, tick uint64
}

func (th *thread) val(t *testing.T, x string) uint64 {
	if x == "%globaltimer" {
		th.clock += th.tick
		return th.clock
	}
	if v, ok := th.special[x]; ok {
		return v
	}
	if strings.HasPrefix(x, "%") {
		v, ok := th.reg[x]
		if !ok {
			t.Fatalf("register %s read before it is written", x)
		}
		return v
	}
	n, err := strconv.ParseUint(x, 10, 64)
	if err != nil {
		t.Fatalf("operand %q: %v", x, err)
	}
	return n
}

// run interprets body (an entry's lines, comments and declarations
// removed) on one thread.
func (th *thread) run(t *testing.T, body []string) {
	labels := map[string]int{}
	for i, l := range body {
		if strings.HasSuffix(l, ":") {
			labels[strings.TrimSuffix(l, ":")] = i
		}
	}
	for pc, steps := 0, 0; ; steps++ {
		if steps > 1e6 || pc >= len(body) {
			t.Fatalf("ran off the end or did not stop (pc %d, %d steps)", pc, steps)
		}
		l := body[pc]
		pc++
		if strings.HasSuffix(l, ":") {
			continue
		}
		if m := rePred.FindStringSubmatch(l); m != nil {
			if (th.reg[m[2]] != 0) == (m[1] == "!") {
				continue
			}
			l = m[3]
		}
		l = strings.TrimSuffix(l, ";")
		op, args, _ := strings.Cut(l, " ")
		args = strings.TrimSpace(args)
		a := strings.Split(args, ",")
		for i := range a {
			a[i] = strings.TrimSpace(a[i])
		}
		switch op {
		case "ret":
			return
		case "bra", "bra.uni":
			to, ok := labels[args]
			if !ok {
				t.Fatalf("branch to %s: no such label", args)
			}
			pc = to
		case "ld.param.u64":
			th.reg[a[0]] = th.params[strings.Trim(a[1], "[]")]
		case "ld.global.v4.u32", "st.global.v4.u32":
			re, addr, regs := reLoadV4, 2, 1
			if op[:2] == "st" {
				re, addr, regs = reStorV4, 1, 2
			}
			m := re.FindStringSubmatch(args)
			if m == nil {
				t.Fatalf("%s %s: operands not understood", op, args)
			}
			at := th.val(t, m[addr])
			if at%16 != 0 {
				t.Fatalf("%s at %#x: not 16-byte aligned", op, at)
			}
			for k, r := range strings.Split(m[regs], ",") {
				r = strings.TrimSpace(r)
				if op[:2] == "ld" {
					th.reg[r] = uint64(th.mem[at+4*uint64(k)])
				} else {
					th.mem[at+4*uint64(k)] = uint32(th.val(t, r))
				}
			}
		case "mov.u32", "mov.u64", "cvt.u64.u32", "cvta.to.global.u64":
			th.reg[a[0]] = th.val(t, a[1])
		case "sub.s64":
			th.reg[a[0]] = th.val(t, a[1]) - th.val(t, a[2])
		case "setp.ne.u32":
			th.reg[a[0]] = 0
			if uint32(th.val(t, a[1])) != uint32(th.val(t, a[2])) {
				th.reg[a[0]] = 1
			}
		case "setp.eq.or.u64": // p = (a == b) || c
			th.reg[a[0]] = 0
			if th.val(t, a[1]) == th.val(t, a[2]) || th.val(t, a[3]) != 0 {
				th.reg[a[0]] = 1
			}
		case "atom.global.min.u64", "atom.global.max.u64":
			at := th.val(t, strings.Trim(a[1], "[]"))
			if at%8 != 0 {
				t.Fatalf("%s at %#x: not 8-byte aligned", op, at)
			}
			old, v := th.mem64[at], th.val(t, a[2])
			th.reg[a[0]] = old
			if op == "atom.global.min.u64" {
				th.mem64[at] = min(old, v)
			} else {
				th.mem64[at] = max(old, v)
			}
		case "mul.lo.u64":
			th.reg[a[0]] = th.val(t, a[1]) * th.val(t, a[2])
		case "add.s64":
			th.reg[a[0]] = th.val(t, a[1]) + th.val(t, a[2])
		case "shl.b64":
			th.reg[a[0]] = th.val(t, a[1]) << th.val(t, a[2])
		case "setp.ge.u64", "setp.lt.u64":
			x, y := th.val(t, a[1]), th.val(t, a[2])
			th.reg[a[0]] = 0
			if x >= y == (op == "setp.ge.u64") {
				th.reg[a[0]] = 1
			}
		default:
			t.Fatalf("instruction %q: the interpreter does not know it", op)
		}
	}
}

// copyBody is gpusim_copy's instructions and labels.
func copyBody(t *testing.T, src string) []string { return body(t, src, Copy) }

// body is the named entry's instructions and labels.
func body(t *testing.T, src, name string) []string {
	ents, errs := parseEntries(stripComments(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, e := range ents {
		if e.name != name {
			continue
		}
		var out []string
		for _, l := range e.body {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, ".reg") {
				out = append(out, l)
			}
		}
		return out
	}
	t.Fatalf("no %s", name)
	return nil
}

// copyErrors launches the copy of n16 elements on grid blocks of block
// threads through the interpreter and says what went wrong.
func copyErrors(t *testing.T, body []string, n16, grid, block uint64) []string {
	const src, dst = 0x10_0000, 0x90_0000
	mem := map[uint64]uint32{}
	rng := rand.New(rand.NewSource(int64(n16)))
	for i := uint64(0); i < 4*n16; i++ {
		mem[src+4*i] = rng.Uint32()
	}
	params := map[string]uint64{"gpusim_copy_dst": dst, "gpusim_copy_src": src, "gpusim_copy_n16": n16}
	for c := uint64(0); c < grid; c++ {
		for tid := uint64(0); tid < block; tid++ {
			th := &thread{params: params, mem: mem, reg: map[string]uint64{},
				special: map[string]uint64{"%tid.x": tid, "%ntid.x": block, "%ctaid.x": c, "%nctaid.x": grid}}
			th.run(t, body)
		}
	}
	var errs []string
	for i := uint64(0); i < 4*n16; i++ {
		if mem[dst+4*i] != mem[src+4*i] {
			errs = append(errs, fmt.Sprintf("element %d not copied", i/4))
			break
		}
	}
	for at := range mem {
		if at >= dst+16*n16 || at >= src+16*n16 && at < dst {
			errs = append(errs, fmt.Sprintf("wrote %#x, outside the copy", at))
			break
		}
	}
	return errs
}

// Sizes that use the tail alone, one trip of four a thread and the tail,
// several trips, and none.
var copyCases = []struct{ n16, grid, block uint64 }{
	{0, 4, 256}, {1, 1, 32}, {1001, 3, 256}, {3077, 3, 256}, {5000, 2, 64}, {512, 1, 128}, {639, 1, 128},
}

func TestCopyKernelCopiesEveryElement(t *testing.T) {
	body := copyBody(t, string(ptx))
	for _, c := range copyCases {
		if errs := copyErrors(t, body, c.n16, c.grid, c.block); len(errs) > 0 {
			t.Errorf("n16 %d on %d x %d threads: %v", c.n16, c.grid, c.block, errs)
		}
	}
}

// The interpreter finds a kernel that loads the wrong element or stops
// short: a passing TestCopyKernelCopiesEveryElement means something.
func TestCopyInterpreterCatches(t *testing.T) {
	src := string(ptx)
	for _, c := range []struct{ name, old, new string }{
		{"second load from the first element", "{%r9, %r10, %r11, %r12}, [%rd19];", "{%r9, %r10, %r11, %r12}, [%rd13];"},
		{"no tail", "@%p2 bra \t$L_copy_done;", "bra \t$L_copy_done;"},
		{"a trip where fewer than four are left", "add.s64 \t%rd18, %rd10, %rd16;", "add.s64 \t%rd18, %rd10, %rd11;"},
		{"the tail striding four", "add.s64 \t%rd10, %rd10, %rd11;", "add.s64 \t%rd10, %rd10, %rd17;"},
	} {
		if !strings.Contains(src, c.old) {
			t.Errorf("%s: %q not in kernels.ptx", c.name, c.old)
			continue
		}
		body := copyBody(t, strings.Replace(src, c.old, c.new, 1))
		caught := false
		for _, k := range copyCases {
			if len(copyErrors(t, body, k.n16, k.grid, k.block)) > 0 {
				caught = true
			}
		}
		if !caught {
			t.Errorf("%s: every copy came out right", c.name)
		}
	}
}

// The spin kernel on blocks that start 1000 ns apart, each thread's timer
// advancing 7 ns a read: thread 0 of each block takes start[0] down to its
// first reading, t0 = its block's start + 7, and start[1] up to its last,
// the first at least the duration after t0: t0 + 7 ceil(d / 7). So start[0]
// is block 0's t0 and start[1] the last block's last reading; with no
// start address nothing is stored, and a duration of 0 stops at the first
// re-read.
func TestSpinKernelStamps(t *testing.T) {
	spin := body(t, string(ptx), Spin)
	const at, base, apart, tick = 0x4000, 1_000_000, 1000, 7
	for _, c := range []struct{ d, grid, block uint64 }{{500, 3, 32}, {0, 2, 32}, {7, 1, 1}, {5000, 4, 8}} {
		for _, addr := range []uint64{0, at} {
			mem64 := map[uint64]uint64{at: ^uint64(0), at + 8: 0}
			for blk := uint64(0); blk < c.grid; blk++ {
				for tid := uint64(0); tid < c.block; tid++ {
					th := &thread{params: map[string]uint64{"gpusim_spin_duration_ns": c.d, "gpusim_spin_start": addr},
						mem64: mem64, reg: map[string]uint64{}, clock: base + blk*apart, tick: tick,
						special: map[string]uint64{"%tid.x": tid, "%ntid.x": c.block, "%ctaid.x": blk, "%nctaid.x": c.grid}}
					th.run(t, spin)
				}
			}
			first := uint64(base + tick)
			last := base + (c.grid-1)*apart + tick + tick*max(1, (c.d+tick-1)/tick)
			want := map[uint64]uint64{at: ^uint64(0), at + 8: 0}
			if addr != 0 {
				want = map[uint64]uint64{at: first, at + 8: last}
			}
			if fmt.Sprint(mem64) != fmt.Sprint(want) {
				t.Errorf("spin %d ns on %d x %d threads, start at %#x: memory %v, want %v", c.d, c.grid, c.block, addr, mem64, want)
			}
		}
	}
}
