package scenarios

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"gpusim/sim"
	"gpusim/topologies"
)

func readShipped(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "topologies", filepath.Base(name)))
}

func load(t *testing.T, src string, set map[string]string) *Scenario {
	t.Helper()
	sc, err := Load("s.yaml", []byte(src), Options{Set: set})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return sc
}

func ids(sc *Scenario) []string {
	var out []string
	for _, th := range sc.Program.Threads {
		for _, op := range th.Ops {
			out = append(out, op.ID)
		}
	}
	return out
}

func TestRepeatAndGeneratedIDs(t *testing.T) {
	sc := load(t, `
name: ids
topology: pcie-2gpu
threads:
  - name: main
    ops:
      - host: {duration: 1 us}
      - repeat:
          count: 2
          ops:
            - kernel: {id: k, stream: gpu0/s, duration: 1 us}
            - repeat: {count: 2, ops: [{record: {id: r, event: e, stream: gpu0/s}}]}
            - sync: {stream: gpu0/s}
`, nil)
	want := "main/0 k#0 r#0#0 r#0#1 main/4 k#1 r#1#0 r#1#1 main/8"
	if got := strings.Join(ids(sc), " "); got != want {
		t.Errorf("ids %s\nwant %s", got, want)
	}
}

func TestVarsAndSet(t *testing.T) {
	src := `
name: vars
topology: ${topo}
vars: {topo: pcie-2gpu, batch: 256 MiB, n: 3}
threads:
  - name: main
    ops:
      - repeat:
          count: ${n}
          ops: [{copy: {id: c, from: cpu0, to: gpu0, bytes: "${batch}", stream: gpu0/copy}}]
`
	sc := load(t, src, nil)
	ops := sc.Program.Threads[0].Ops
	if len(ops) != 3 || ops[0].Bytes != 256<<20 {
		t.Errorf("got %d ops of %d bytes, want 3 of %d", len(ops), ops[0].Bytes, 256<<20)
	}
	sc = load(t, src, map[string]string{"n": "5", "batch": "1 GB"})
	ops = sc.Program.Threads[0].Ops
	if len(ops) != 5 || ops[0].Bytes != 1e9 {
		t.Errorf("with --set: got %d ops of %d bytes, want 5 of 1e9", len(ops), ops[0].Bytes)
	}
	if sc.Vars["n"] != "5" {
		t.Errorf("vars record %q, want the --set value", sc.Vars["n"])
	}
	_, err := Load("s.yaml", []byte(src), Options{Set: map[string]string{"batchsize": "1"}})
	if err == nil || !strings.Contains(err.Error(), `no var "batchsize"`) || !strings.Contains(err.Error(), "topo, batch, n") {
		t.Errorf("unknown --set: %v", err)
	}
}

// A swept var whose values are mappings sweeps their vars together: each
// point (or --set of the group, with one of its values as the table
// writes it) sets them all; the first value is the default. What does not
// fit the shape is refused where it is.
func TestGroupedSweepValues(t *testing.T) {
	src := `
name: group
topology: pcie-2gpu
sweep:
  shape:
    - {n: 2, d: 1 us}
    - {d: 5 us, n: 4}
threads:
  - name: main
    ops: [{repeat: {count: "${n}", ops: [{kernel: {stream: gpu0/s, duration: "${d}"}}]}}]
`
	sc := load(t, src, nil)
	if len(sc.Sweep) != 1 || sc.Sweep[0].Name != "shape" || strings.Join(sc.Sweep[0].Values, "; ") != "n=2 d=1 us; n=4 d=5 us" {
		t.Fatalf("sweep %+v, want shape: n=2 d=1 us; n=4 d=5 us (in the first value's order)", sc.Sweep)
	}
	ops := sc.Program.Threads[0].Ops
	if len(ops) != 2 || ops[0].Duration != sim.Microsecond || sc.Vars["n"] != "2" {
		t.Errorf("default: %d ops of %s, vars %v; want the first value: 2 of 1 us", len(ops), ops[0].Duration, sc.Vars)
	}
	for _, opt := range []Options{{Point: map[string]string{"shape": "n=4 d=5 us"}}, {Set: map[string]string{"shape": "n=4 d=5 us"}}} {
		sc, err := Load("s.yaml", []byte(src), opt)
		if err != nil {
			t.Fatal(err)
		}
		if ops := sc.Program.Threads[0].Ops; len(ops) != 4 || ops[0].Duration != 5*sim.Microsecond {
			t.Errorf("%+v: %d ops of %s, want 4 of 5 us", opt, len(ops), ops[0].Duration)
		}
	}
	// --set of the group and of one of its vars is one --set too many; a
	// value of a member it got from the sweep says where.
	_, err := Load("s.yaml", []byte(src), Options{Set: map[string]string{"shape": "n=4 d=5 us", "n": "3"}})
	if want := "--set n: shape sets it too (to 4); give one of them"; err == nil || err.Error() != want {
		t.Errorf("--set of a group and its var: %v, want %s", err, want)
	}
	_, err = Load("s.yaml", []byte(strings.Replace(src, "{d: 5 us, n: 4}", "{d: 5 us, n: -1}", 1)), Options{Point: map[string]string{"shape": "n=-1 d=5 us"}})
	if err == nil || !strings.Contains(err.Error(), "from sweep: at 7:20") {
		t.Errorf("a bad member value: %v, want it placed at 7:20, the value", err)
	}
	// vars: may not give a group's var another default, nor name the group.
	for _, v := range []string{"{n: 3}", "{shape: x}"} {
		_, err = Load("s.yaml", []byte(strings.Replace(src, "sweep:", "vars: "+v+"\nsweep:", 1)), Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "s.yaml:4:8: vars.") || strings.Contains(err.Error(), "\n") {
			t.Errorf("vars: %s: %v, want one line at 4:8", v, err)
		}
	}
	if by, ok := Sets(sc.Sweep, "d"); !ok || by != "shape" {
		t.Errorf("Sets(d) = %q, %v; want shape", by, ok)
	}
	_, err = Load("s.yaml", []byte(src), Options{Set: map[string]string{"shape": "n=3 d=1 us"}})
	if want := `--set shape: "n=3 d=1 us" is not a value of s.yaml's shape; its values: n=2 d=1 us; n=4 d=5 us`; err == nil || err.Error() != want {
		t.Errorf("a value not in the group: %v, want %s", err, want)
	}
	for _, c := range []struct{ sweep, want string }{
		{"shape: [{n: 2, d: 1 us}, 3]", "s.yaml:5:28: sweep.shape[1]: a plain value of shape, whose first value is a mapping of vars (n, d): give each value as a mapping of them"},
		{"shape: [3, {n: 2, d: 1 us}]", "s.yaml:5:14: sweep.shape[1]: a mapping among the plain values of shape: give every value as a mapping of the same vars, or none"},
		{"shape: [{n: 2, d: 1 us}, {n: 3}]", "s.yaml:5:28: sweep.shape[1]: this value of shape sets n; each must set the vars its first sets: n, d"},
		{"shape: [{n: 2, d: 1 us}]\n  n: [1, 2]", "s.yaml:6:3: sweep.n: n is swept already, by shape"},
		{"shape: [{n: 2, d: 1 us, e: 3}]", "s.yaml:5:3: sweep.shape: shape sets e: nothing in the scenario refers to ${e}, so its value would change nothing; the vars in use: n, d"},
		{"shape: [{}, {n: 2, d: 1 us}]", "s.yaml:5:11: sweep.shape[0]: an empty mapping: give the vars this value of shape sets, such as {tensor: 4, stages: 2}"},
		{"shape: [{n: 2, d: 1 us}, {d: 1 us, n: 2}]", "s.yaml:5:28: sweep.shape[1]: this value of shape is written n=2 d=1 us, as the one at 5:11 is: give each once"},
		{"shape: [{shape: 1, n: 2, d: 1 us}, {shape: 2, n: 3, d: 1 us}]", "s.yaml:5:12: sweep.shape[0].shape: a group's vars cannot include the group itself (shape)"},
		// A plain value twice, as a group's: its points would run twice.
		{"n: [1, 2, 1]\n  d: [1 us]", "s.yaml:5:13: sweep.n[2]: this value of n is written 1, as the one at 5:7 is: give each once"},
		// Values label points in tables and messages: no control
		// characters, in a plain value or a group's.
		{"n: [1, \"2\\a\"]\n  d: [1 us]", "s.yaml:5:10: sweep.n[1]: this value of n holds a control character (U+0007): a sweep's values label its points in tables and messages; give printable text"},
		{"n: [1, \"2\\u202e\"]\n  d: [1 us]", "s.yaml:5:10: sweep.n[1]: this value of n holds a control character (U+202E): a sweep's values label its points in tables and messages; give printable text"},
		{"shape: [{n: 2, d: \"1 us\\t\"}]", "s.yaml:5:21: sweep.shape[0].d: this value of d holds a control character (U+0009): a sweep's values label its points in tables and messages; give printable text"},
	} {
		bad := strings.Replace(src, "  shape:\n    - {n: 2, d: 1 us}\n    - {d: 5 us, n: 4}\n", "  "+c.sweep+"\n", 1)
		_, err := Load("s.yaml", []byte(bad), Options{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.sweep, err, c.want)
		}
	}
}

func TestRooflineKernelDuration(t *testing.T) {
	sc := load(t, `
name: roofline
topology: pcie-2gpu
threads:
  - name: main
    ops:
      - kernel: {id: compute, stream: gpu0/s, flops: 20 TFLOP, dtype: bf16, bytes: 4 GiB}
      - kernel: {id: memory, stream: gpu0/s, bytes: 100 GB}
      - kernel: {id: fixed, stream: gpu0/s, duration: 7 us}
`, nil)
	ops := sc.Program.Threads[0].Ops
	// L40S: 362.05 TFLOP/s bf16 x 0.7 and 864 GB/s x 0.87, plus 0.58 us.
	compute := 20e12/(362.05e12*0.7) + 0.58e-6
	memory := 100e9/(864e9*0.87) + 0.58e-6
	for i, want := range []float64{compute, memory, 7e-6} {
		got := ops[i].Duration.Seconds()
		if d := got - want; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: %.9g s, want %.9g s", ops[i].ID, got, want)
		}
	}
	// The kernel of memory traffic alone keeps it, for the hw backend's
	// memory kernel; the others have none.
	for i, want := range []int64{0, 100e9, 0} {
		if ops[i].Bytes != want {
			t.Errorf("%s: bytes %d, want %d", ops[i].ID, ops[i].Bytes, want)
		}
	}
}

func TestStreamsAndEventsExistOnceUsed(t *testing.T) {
	sc := load(t, `
name: streams
topology: pcie-2gpu
threads:
  - name: a
    ops: [{kernel: {stream: gpu1/x, duration: 1 us}}, {record: {event: e, stream: gpu0/y}}]
  - name: b
    ops: [{wait: {event: e, stream: gpu1/x}}, {kernel: {stream: gpu0/y, duration: 1 us}}]
`, nil)
	p := sc.Program
	if len(p.Streams) != 2 || p.StreamName(sc.Topology.Machine, 0) != "gpu1/x" || p.StreamName(sc.Topology.Machine, 1) != "gpu0/y" {
		t.Errorf("streams %+v, want gpu1/x, gpu0/y in order of first use", p.Streams)
	}
	if len(p.Events) != 1 || p.Events[0] != "e" {
		t.Errorf("events %v", p.Events)
	}
}

func TestTopologyPathIsRelativeToTheScenario(t *testing.T) {
	var asked string
	_, err := Load("dir/sub/s.yaml", []byte("name: x\ntopology: ../t.yaml\nthreads: [{name: m, ops: [{host: {duration: 1 s}}]}]\n"), Options{
		ReadFile: func(name string) ([]byte, error) {
			asked = name
			b, _ := topologies.ShippedSource("pcie-2gpu")
			return b, nil
		},
	})
	if err != nil || asked != "dir/t.yaml" {
		t.Errorf("read %q (err %v), want dir/t.yaml", asked, err)
	}
}

func TestOpLimit(t *testing.T) {
	_, err := Load("s.yaml", []byte(`
name: big
topology: pcie-2gpu
threads:
  - name: m
    ops: [{repeat: {count: 1000, ops: [{repeat: {count: 1000, ops: [{host: {duration: 1 ns}}]}}]}}]
`), Options{MaxOps: 999_999})
	if err == nil || !strings.Contains(err.Error(), "expands to 1000000 ops, more than the limit of 999999") {
		t.Errorf("err = %v, want the count it would reach", err)
	}
}

// A scenario of more ops than there is memory for is refused with a
// *MemoryError before its ops are expanded: two threads of 1,000 x 200
// one-op repeats, the first alone 200,000 ops, past 100,000.
func TestMemoryOps(t *testing.T) {
	src := []byte(`
name: big
topology: pcie-2gpu
threads:
  - name: a
    ops: [{repeat: {count: 1000, ops: [{repeat: {count: 200, ops: [{host: {duration: 1 ns}}]}}]}}]
  - name: b
    ops: [{repeat: {count: 1000, ops: [{repeat: {count: 200, ops: [{host: {duration: 1 ns}}]}}]}}]
`)
	_, err := Load("s.yaml", src, Options{MaxOps: 1 << 40, MemoryOps: 100_000})
	var me *MemoryError
	if !errors.As(err, &me) || me.Ops != 200_000 || me.File != "s.yaml" {
		t.Fatalf("err = %v, want a MemoryError of s.yaml at 200000 ops", err)
	}
	// A mistake in the file is said first: it is the user's to fix.
	bad := []byte(strings.Replace(string(src), "ops: [{repeat", "ops: [{host: {duration: abc}}, {repeat", 1))
	if _, err := Load("s.yaml", bad, Options{MaxOps: 1 << 40, MemoryOps: 100_000}); err == nil || errors.As(err, &me) || !strings.Contains(err.Error(), `"abc" is not a duration`) {
		t.Errorf("with a bad duration: %v, want the duration's error", err)
	}
	// Room for both threads' 400,000: no error of that kind.
	if _, err := Load("s.yaml", src, Options{MaxOps: 1 << 40, MemoryOps: 400_000}); err != nil {
		t.Errorf("with room: %v", err)
	}
}

// A limit past MaxOpsCeiling is the ceiling: a repeat of 2^62 ops is
// refused as past it, and saying so, where Load once made room for them
// (a panic: "makeslice: cap out of range").
func TestMaxOpsCeiling(t *testing.T) {
	src := []byte("name: big\ntopology: pcie-2gpu\nthreads:\n  - name: t\n    ops:\n      - repeat: {count: 4611686018427387904, ops: [{host: {duration: 0 s}}]}\n")
	_, err := Load("s.yaml", src, Options{MaxOps: math.MaxInt64})
	if want := "s.yaml:6:7: threads[0].ops: expands to more than 4.6e18 ops, more than the limit of 68719476736; lower a repeat count (the limit is at its ceiling, 2^36)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestShippedScenariosLoadAndRun(t *testing.T) {
	for _, n := range Shipped() {
		src, _ := ShippedSource(n)
		sc, err := Load(n+".yaml", src, Options{ReadFile: readShipped})
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		// As run --trace runs them: collectives' link spans recorded,
		// and the trace written.
		res, err := sim.RunOptions(sc.Topology.Machine, sc.Program, sim.Options{CollLinks: true})
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if len(res.Warnings) > 0 {
			t.Errorf("%s: warnings %v", n, res.Warnings)
		}
		if err := sim.WriteTrace(io.Discard, res); err != nil {
			t.Errorf("%s: trace: %v", n, err)
		}
	}
}

// FuzzLoad checks that no scenario text makes the loader (or, when it loads,
// the simulator) panic or hang.
func FuzzLoad(f *testing.F) {
	addLoadSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Load("f.yaml", data, Options{ReadFile: readShipped, MaxOps: 10_000})
		if err != nil {
			return
		}
		if res, err := sim.RunOptions(sc.Topology.Machine, sc.Program, sim.Options{CollLinks: true}); res != nil {
			_ = sim.WriteTrace(io.Discard, res)
			_ = err
		}
	})
}

// FuzzSourceLoad: a file parsed once loads as Load loads it, twice over
// (the first load leaves the parsed file as it was), errors and all.
func FuzzSourceLoad(f *testing.F) {
	addLoadSeeds(f)
	f.Add([]byte("name: x\ntopology: pcie-2gpu\nvars: {d: 1 us}\nthreads: [{name: m, ops: &o [{kernel: &k {stream: gpu0/s, duration: \"${d}\"}}, {kernel: {<<: *k, id: k2}}, {repeat: {count: 2, ops: *o}}]}]\nsweep: {d: [1 us, 2 us]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		opt := Options{ReadFile: readShipped, MaxOps: 10_000}
		want, werr := Load("f.yaml", data, opt)
		src, perr := Parse("f.yaml", data)
		if perr != nil {
			if werr == nil || werr.Error() != perr.Error() {
				t.Fatalf("Parse: %v; Load: %v", perr, werr)
			}
			return
		}
		for i := range 2 {
			got, err := src.Load(opt)
			if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
				t.Fatalf("load %d: %v; Load: %v", i+1, err, werr)
			}
			if err == nil && (!reflect.DeepEqual(got.Program, want.Program) || !reflect.DeepEqual(got.Vars, want.Vars)) {
				t.Fatalf("load %d: the program differs from Load's", i+1)
			}
		}
	})
}

// addLoadSeeds adds the fuzz seeds of the loader: the shipped scenarios,
// small files of each feature, and the command line's bad-input corpus.
func addLoadSeeds(f *testing.F) {
	for _, n := range Shipped() {
		b, _ := ShippedSource(n)
		f.Add(b)
	}
	for _, s := range []string{
		"name: x\ntopology: pcie-2gpu\nthreads: [{name: m, ops: [{kernel: {stream: gpu0/s, duration: 1 us}}]}]",
		"name: x\ntopology: pcie-2gpu\nvars: {a: 1}\nthreads: [{name: m, ops: [{repeat: {count: ${a}, ops: [{host: {duration: ${a} s}}]}}]}]",
		"name: x\ntopology: pcie-2gpu\nthreads: [{name: m, ops: [{await: {semaphore: s}}]}]",
		"name: x\ntopology: pcie-2gpu\nthreads: [{name: m, ops: [{copy: {from: gpu0, to: gpu1, bytes: 1 MiB, stream: gpu1/s}}, {sync: {device: gpu0}}]}]",
		"threads: &a [*a]",
		// Merge keys, shared lists of ops, a second document, a flow list over lines.
		"name: x\ntopology: pcie-2gpu\nvars: &v {a: 1}\nsemaphores: {<<: *v}\nthreads: [{name: m, ops: &o [{kernel: &k {stream: gpu0/s, duration: 1 us}}, {kernel: {<<: *k, id: k2}}, {repeat: {count: 2, graph: true, ops: *o}}]}]",
		"name: x\ntopology: pcie-2gpu\nthreads: [\n  {name: m, ops: [\n    {host: {duration: 1 us}},\n    {host: {duration: 2 us}\n  ]}\n]\n---\nb: 2\n",
		// A small generation, decode steps as graphs and op by op.
		"name: x\ntopology: pcie-2gpu\ninference: {gpus: all, model: gpt3-125m, batch: 2, prompt: 8, tokens: 3}",
		"name: x\ntopology: pcie-2gpu\ninference: {gpus: all, tensor: 1, model: gpt3-125m, prompt: 8, tokens: 2, graphs: false, host_per_kernel: 0 us}",
		// Interleaved stages with a sharded optimizer; an interleaved pipeline.
		"name: x\ntopology: pcie-2gpu\ntraining: {gpus: all, model: gpt3-125m, seq: 64, pipeline: 2, pipeline_chunks: 2, accumulation: 2, sharding: zero1}",
		"name: x\ntopology: pcie-2gpu\npipeline: {gpus: 2, schedule: interleaved, chunks: 3, microbatches: 4, forward: 1 ms}",
	} {
		f.Add([]byte(s))
	}
	// The bad-input corpus of the command line: broken files of every kind.
	bad, _ := filepath.Glob(filepath.Join("..", "cmd", "gpusim", "testdata", "bad", "s-*.yaml"))
	for _, name := range bad {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
}

// Lists of ops used through YAML aliases are read once per list, not once
// per use: eleven levels of a list of four repeats of the level below (2
// kernels at the bottom) are 2 x (1 + 4 + ... + 4^10) = 2,796,202 ops, and
// fourteen levels, 2 x (4^14 - 1) / 3 = 178,956,970, are refused by count
// before anything is expanded. Each took about a minute and 3 GB.
func TestAliasedOpListsAreReadOnce(t *testing.T) {
	src := func(levels int) []byte {
		var b strings.Builder
		b.WriteString("name: a\ntopology: pcie-2gpu\nthreads:\n  - name: main\n    host: cpu0\n    ops: &o0\n")
		b.WriteString("      - repeat: {count: 1, ops: &o1 [{kernel: {stream: gpu0/s, duration: 1 us}}, {kernel: {stream: gpu0/s, duration: 1 us}}]}\n")
		for k := 2; k <= levels; k++ {
			item := fmt.Sprintf("{repeat: {count: 1, ops: *o%d}}", k-1)
			fmt.Fprintf(&b, "      - repeat: {count: 1, ops: &o%d [%s, %s, %s, %s]}\n", k, item, item, item, item)
		}
		return []byte(b.String())
	}
	sc, err := Load("a.yaml", src(11), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Program.NumOps(); got != 2796202 {
		t.Errorf("%d ops, want 2796202", got)
	}
	_, err = Load("a.yaml", src(14), Options{})
	want := "a.yaml:6:10: threads[0].ops: expands to 178956970 ops, more than the limit of 10000000; lower a repeat count or raise the limit (--max-ops)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// Lists shared through aliases are a DAG: the graph check and the
// expansion read each shared list once, not once per path to it. Eleven
// levels of 8 repeats of the level below, 4 ops at the bottom: under a
// graph repeat, the kernel and 8^11 x 4 ops, 34,359,738,369 in all, are
// refused by count at once (the graph check walked every path); with a
// repeat of count 0 at the bottom, the levels hold no ops and the thread
// is its one kernel (the expansion walked every path). The list of ops
// starts at line 7, column 7.
func TestSharedListsAreReadOnceEverywhere(t *testing.T) {
	src := func(bottom string, graph bool) []byte {
		var b strings.Builder
		b.WriteString("name: d\ntopology: pcie-2gpu\nthreads:\n  - name: main\n    host: cpu0\n    ops:\n")
		b.WriteString("      - kernel: {stream: gpu0/s, duration: 1 us}\n")
		fmt.Fprintf(&b, "      - repeat: {count: 0, ops: &l0 [%s]}\n", bottom)
		for k := 1; k <= 11; k++ {
			item := fmt.Sprintf("{repeat: {count: 1, ops: *l%d}}", k-1)
			fmt.Fprintf(&b, "      - repeat: {count: 0, ops: &l%d [%s]}\n", k, strings.Repeat(item+", ", 7)+item)
		}
		fmt.Fprintf(&b, "      - repeat: {count: 1, graph: %t, ops: *l11}\n", graph)
		return []byte(b.String())
	}
	four := "{kernel: {stream: gpu0/s, duration: 1 us}}, {kernel: {stream: gpu0/s, duration: 1 us}}, {record: {stream: gpu0/s, event: e}}, {wait: {stream: gpu0/s, event: e}}"
	_, err := Load("d.yaml", src(four, true), Options{})
	want := "d.yaml:7:7: threads[0].ops: expands to 34359738369 ops, more than the limit of 10000000; lower a repeat count or raise the limit (--max-ops)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	sc, err := Load("d.yaml", src("{repeat: {count: 0, ops: [{kernel: {stream: gpu0/s, duration: 1 us}}]}}", false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := sc.Program.NumOps(); n != 1 {
		t.Errorf("%d ops, want the one kernel", n)
	}
}

// The op limit counts every thread: two threads of 6 ops each fit a limit
// of 10 alone, and the second is refused at its ops with the total, 12.
func TestOpLimitCountsAllThreads(t *testing.T) {
	src := "name: x\ntopology: pcie-2gpu\nthreads:\n" +
		"  - {name: a, host: cpu0, ops: [{repeat: {count: 6, ops: [{host: {duration: 1 us}}]}}]}\n" +
		"  - {name: b, host: cpu0, ops: [{repeat: {count: 6, ops: [{host: {duration: 1 us}}]}}]}\n"
	_, err := Load("x.yaml", []byte(src), Options{MaxOps: 10})
	want := "x.yaml:5:32: threads[1].ops: the scenario expands to 12 ops, more than the limit of 10; lower a repeat count or raise the limit (--max-ops)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// Launches of a graph on two streams are ordered one behind the other, as
// cudaGraphLaunch orders each launch behind the graph's previous ones. On
// pcie-2gpu a graph launch costs the host 11.3 us (the default
// graph_launch) and issues a 10 us kernel a on s1, then b on s2 after a (an
// event), each on half the SMs. Launch 0: a 11.3-21.3, b 21.3-31.3; launch
// 1 issued at 22.6 us, but a#1 waits for b#0: 31.3-41.3, b#1 41.3-51.3.
// Unordered, a#1 would run beside b#0 (22.6-32.6). A graph on one stream needs no order of its
// own: its stream orders it.
func TestGraphLaunchesAreOrdered(t *testing.T) {
	sc := load(t, `
name: g
topology: pcie-2gpu
threads:
  - name: main
    ops:
      - repeat:
          count: 2
          graph: true
          ops:
            - kernel: {id: a, stream: gpu0/s1, duration: 10 us, sm_share: 0.5}
            - record: {event: e, stream: gpu0/s1}
            - wait: {event: e, stream: gpu0/s2}
            - kernel: {id: b, stream: gpu0/s2, duration: 10 us, sm_share: 0.5}
      - repeat:
          count: 2
          graph: true
          ops: [{kernel: {id: c, stream: gpu1/s3, duration: 10 us}}]
`, nil)
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"a#0": {11.3, 21.3}, "b#0": {21.3, 31.3}, "a#1": {31.3, 41.3}, "b#1": {41.3, 51.3}}
	n := 0
	for _, r := range res.Ops {
		if w, ok := want[r.ID]; ok {
			n++
			if r.Start != sim.Time(w[0]*1e6) || r.End != sim.Time(w[1]*1e6) {
				t.Errorf("%s: %s-%s, want %g-%g us", r.ID, r.Start, r.End, w[0], w[1])
			}
		}
	}
	if n != len(want) {
		t.Errorf("found %d of the kernels %v", n, want)
	}
	// The one-stream graph adds no ops: c#0 and c#1 and nothing else.
	var extra []string
	for _, op := range sc.Program.Threads[0].Ops[len(sc.Program.Threads[0].Ops)-2:] {
		extra = append(extra, op.ID)
	}
	if strings.Join(extra, " ") != "c#0 c#1" {
		t.Errorf("the one-stream graph's launches are %v, want c#0 c#1 alone", extra)
	}
}

// The ops that order a graph's launches count toward the op limit before
// anything is expanded: a graph of two kernels on two streams adds 3x2-2
// = 4 ops a launch (two records, two waits), so 10 launches are 60 ops.
func TestGraphOrderCountsTowardTheOpLimit(t *testing.T) {
	src := `
name: g
topology: pcie-2gpu
threads:
  - name: main
    ops:
      - repeat:
          count: 10
          graph: true
          ops:
            - kernel: {stream: gpu0/a, duration: 1 us}
            - kernel: {stream: gpu0/b, duration: 1 us}
`
	_, err := Load("g.yaml", []byte(src), Options{MaxOps: 59})
	want := "g.yaml:7:7: threads[0].ops: expands to 60 ops, more than the limit of 59; lower a repeat count (the count includes the 3n-2 ops that order each launch of a graph on n streams) or raise the limit (--max-ops)"
	if err == nil || err.Error() != want {
		t.Errorf("limit 59: got %v, want %s", err, want)
	}
	sc, err := Load("g.yaml", []byte(src), Options{MaxOps: 60})
	if err != nil {
		t.Fatal(err)
	}
	if n := sc.Program.NumOps(); n != 60 {
		t.Errorf("%d ops, want 60", n)
	}
}

// A declared semaphore that no op names is refused, but one named only in
// a repeat of count 0 (a sweep point that runs none of it) is used.
func TestDeclaredSemaphoresMustBeNamed(t *testing.T) {
	src := `
name: s
topology: pcie-2gpu
semaphores: {slot: 1}
threads:
  - name: t
    ops:
      - repeat: {count: 0, ops: [{await: {semaphore: %s}}, {signal: {semaphore: %s}}]}
`
	if _, err := Load("s.yaml", []byte(fmt.Sprintf(src, "slot", "slot")), Options{}); err != nil {
		t.Errorf("a semaphore named in a repeat of count 0: %v", err)
	}
	_, err := Load("s.yaml", []byte(fmt.Sprintf(src, "slots", "slots")), Options{})
	want := `s.yaml:4:14: semaphores.slot: semaphore "slot" is declared but no op signals or awaits it (semaphores used: slots)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestRanksAgreeOnDType: ops issuing the ranks of one collective may leave
// the dtype to the size, but those that give one must give the same: the
// first op's none, the second's bf16 and the third's fp32 disagree at the
// third, against the second's.
func TestRanksAgreeOnDType(t *testing.T) {
	rank := func(g, dtype string) string {
		return "  - {name: t" + g + ", host: cpu0, ops: [{allreduce: {id: g, gpus: [gpu0, gpu1, gpu2], bytes: 1 MiB, stream: c, rank: gpu" + g + dtype + "}}]}\n"
	}
	src := "name: d\ntopology: dgx-h100\nthreads:\n" + rank("0", "") + rank("1", ", dtype: bf16") + rank("2", ", dtype: fp32")
	_, err := Load("s.yaml", []byte(src), Options{})
	if err == nil || !strings.Contains(err.Error(), `s.yaml:6:`) || !strings.Contains(err.Error(), "dtype fp32 here, bf16 at s.yaml:5:") {
		t.Errorf("err = %v, want the third rank's fp32 against the second's bf16", err)
	}
	// Without the third, the first's silence and the second's bf16 agree.
	if _, err := Load("s.yaml", []byte("name: d\ntopology: dgx-h100\nthreads:\n"+rank("0", "")+rank("1", ", dtype: bf16")+rank("2", "")), Options{}); err != nil {
		t.Errorf("err = %v, want none", err)
	}
}

// TestRankDisagreementsSayWhatWasWritten: what differs is named as the ops
// wrote it: a root and a communicator both (neither hidden by the other),
// channels one op left out ("none"); a dtype in other letters is the
// same dtype, and an algorithm left out agrees with the one gpusim picks.
func TestRankDisagreementsSayWhatWasWritten(t *testing.T) {
	two := func(a, b string) error {
		op := func(g, extra string) string {
			return "  - {name: t" + g + ", host: cpu0, ops: [{broadcast: {id: g, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu" + g + extra + "}}]}\n"
		}
		_, err := Load("s.yaml", []byte("name: d\ntopology: dgx-h100\nthreads:\n"+op("0", a)+op("1", b)), Options{})
		return err
	}
	for _, tc := range []struct{ a, b, want string }{
		{", root: gpu0", ", root: gpu1, comm: x", "root gpu1 here, gpu0 at s.yaml:4:46; comm x here, none at s.yaml:4:46"},
		{", channels: 2", "", "channels none here, 2 at s.yaml:4:46"},
		{", dtype: BF16", ", dtype: bf16", ""},
	} {
		err := two(tc.a, tc.b)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q and %q: %v, want them to agree", tc.a, tc.b, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "disagree: "+tc.want+"; every")):
			t.Errorf("%q and %q: %v, want %q", tc.a, tc.b, err, tc.want)
		}
	}
	// Left out, the algorithm is the one gpusim picks: naming it agrees.
	plan, err := Load("s.yaml", []byte("name: d\ntopology: dgx-h100\nthreads: [{name: t, host: cpu0, ops: [{broadcast: {id: g, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c}}]}]\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := two("", ", algorithm: "+plan.Program.Threads[0].Ops[0].Coll.Algorithm); err != nil {
		t.Errorf("an algorithm left out and the one picked: %v, want them to agree", err)
	}
}

// TestSourceLoadsAsLoadDoes loads every point of a sweep from one parsed
// Source, all at once, and each from its file with Load: the two agree,
// and the points differ from one another where their values do.
func TestSourceLoadsAsLoadDoes(t *testing.T) {
	src0, ok := ShippedSource("quickstart")
	if !ok {
		t.Fatal("quickstart is not shipped")
	}
	data := []byte(string(src0) + "sweep:\n  batch: [1 MiB, 2 MiB, 3 MiB, 4 MiB, 5 MiB, 6 MiB, 7 MiB, 8 MiB]\n")
	base, err := Load("q.yaml", data, Options{ReadFile: readShipped})
	if err != nil {
		t.Fatal(err)
	}
	points := Points(base.Sweep)
	src, err := Parse("q.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]*Scenario, len(points))
	var wg sync.WaitGroup
	for i, p := range points {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc, err := src.Load(Options{ReadFile: readShipped, Point: p.Set(base.Sweep)})
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = sc
		}()
	}
	wg.Wait()
	for i, p := range points {
		want, err := Load("q.yaml", data, Options{ReadFile: readShipped, Point: p.Set(base.Sweep)})
		if err != nil {
			t.Fatal(err)
		}
		if got[i] == nil {
			continue
		}
		if !reflect.DeepEqual(got[i].Program, want.Program) || !reflect.DeepEqual(got[i].Vars, want.Vars) {
			t.Errorf("point %d (%s): Source.Load and Load differ", i, p[0])
		}
		// The first copy of each batch: batch MiB.
		if b := got[i].Program.Threads[0].Ops[0].Bytes; b != int64(i+1)<<20 {
			t.Errorf("point %d (%s): first copy of %d bytes, want %d", i, p[0], b, (i+1)<<20)
		}
	}
}

// A collective whose plan has more transfers than Options.PlanTasks is
// refused at its op, naming the limit, in a scenario and in a training
// generator alike; within the limit it loads.
func TestPlanTasksLimit(t *testing.T) {
	for _, c := range []struct{ name, src, at string }{
		{"op", "name: s\ntopology: dgx-h100\nthreads: [{name: m, host: cpu0, ops: [{allreduce: {gpus: all, bytes: 1 GiB, stream: nccl, algorithm: ring}}]}]\n", "s.yaml:3:"},
		{"training", "name: s\ntopology: dgx-h100\ntraining: {model: gpt3-125m, gpus: all, steps: 1, batch: 8, algorithm: ring}\n", "s.yaml:3:"},
	} {
		if _, err := Load("s.yaml", []byte(c.src), Options{PlanTasks: 1 << 20}); err != nil {
			t.Errorf("%s, within the limit: %v", c.name, err)
		}
		_, err := Load("s.yaml", []byte(c.src), Options{PlanTasks: 10})
		if err == nil || !strings.HasPrefix(err.Error(), c.at) || !strings.Contains(err.Error(), "has more than 10 transfers, more than the memory free here holds") {
			t.Errorf("%s: %v; want an error at %s naming the limit", c.name, err, c.at)
		}
		// The memory's failure, not the file's (gpusim exits 1 for it).
		if pe := (*PlanMemoryError)(nil); !errors.As(err, &pe) {
			t.Errorf("%s: %T, want a *PlanMemoryError", c.name, err)
		}
	}
}

// An await on a semaphore that starts at 0 and that no op signals waits
// forever: the load warns (validate says it before any run), naming the
// name meant where one is close, and says nothing where a signal or a
// count exists.
func TestAwaitNeverSignalled(t *testing.T) {
	for _, c := range []struct{ sems, signal, want string }{
		{"", "ready", `s.yaml:7:19: op b/0 awaits semaphore "raedy", which no op signals and which starts at 0: it waits forever (did you mean "ready"?)`},
		{"", "other", `s.yaml:7:19: op b/0 awaits semaphore "raedy", which no op signals and which starts at 0: it waits forever (semaphores signalled: other)`},
		{"semaphores: {raedy: 1}\n", "other", ""},
		{"", "raedy", ""},
	} {
		src := "name: s\ntopology: pcie-2gpu\n" + c.sems + "threads:\n  - name: a\n    ops: [{signal: {semaphore: " + c.signal + "}}]\n  - name: b\n    ops: [{await: {semaphore: raedy}}]\n"
		if c.sems != "" {
			c.want = strings.Replace(c.want, "s.yaml:7:", "s.yaml:8:", 1)
		}
		sc, err := Load("s.yaml", []byte(src), Options{})
		if err != nil {
			t.Fatalf("%q: %v", c.signal, err)
		}
		got := strings.Join(sc.Program.Warnings, "\n")
		if got != c.want {
			t.Errorf("semaphores %q, signal %q: warnings %q, want %q", c.sems, c.signal, got, c.want)
		}
	}
}

// A var whose value refers to another var is refused where it is written,
// saying vars are not substituted there (it read as a bad duration where
// used); a --set of it replaces it, and loads.
func TestVarInsideVars(t *testing.T) {
	src := "name: s\ntopology: pcie-2gpu\nvars: {n: 4, d: \"${n} ms\"}\nthreads:\n  - name: m\n    ops:\n      - kernel: {stream: gpu0/s, duration: \"${d}\"}\n"
	_, err := Load("s.yaml", []byte(src), Options{})
	if want := `s.yaml:3:17: vars.d: "${n} ms" refers to ${n}, but vars are not substituted inside vars: give d a plain value (or set it with --set, or sweep it)`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := Load("s.yaml", []byte(src), Options{Set: map[string]string{"d": "2 ms"}}); err != nil {
		t.Errorf("with --set d: %v", err)
	}
}

// A root that is not one of the collective's GPUs is refused with the
// GPUs it may be (a rank number, root: 0, is the common slip).
func TestRootNamesTheGPUs(t *testing.T) {
	src := "name: s\ntopology: dgx-h100\nthreads: [{name: m, host: cpu0, ops: [{broadcast: {gpus: [gpu0, gpu1], bytes: 1 MiB, stream: nccl, root: 0}}]}]\n"
	_, err := Load("s.yaml", []byte(src), Options{ReadFile: readShipped})
	if want := `s.yaml:3:106: threads[0].ops[0].broadcast.root: root "0" is not one of the collective's GPUs: gpu0, gpu1`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// The check of vars inside vars: reads only references to vars ("${x}"),
// not a lone "${" in text, and leaves out a var the sweep gives values
// (each point, as gpusim sweep loads it, loads).
func TestVarInsideVarsLeavesTextAndSweeps(t *testing.T) {
	for _, c := range []struct {
		src   string
		point map[string]string
	}{
		{"name: s\ndescription: \"${note}\"\ntopology: pcie-2gpu\nvars: {note: \"shell uses ${ and }\"}\nthreads:\n  - name: m\n    ops:\n      - kernel: {stream: gpu0/s, duration: 1 us}\n", nil},
		{"name: s\ntopology: pcie-2gpu\nvars: {d: \"${x}\", x: 10 us}\nsweep: {d: [5 us, 7 us]}\nthreads:\n  - name: m\n    ops:\n      - kernel: {stream: gpu0/s, duration: \"${d}\"}\n", map[string]string{"d": "7 us"}},
	} {
		if _, err := Load("s.yaml", []byte(c.src), Options{Point: c.point}); err != nil {
			t.Errorf("%v\n%s", err, c.src)
		}
	}
}

// A var in a key is not replaced (vars stand for values): one error at the
// key, saying so and what key the var would have made, rather than "unknown
// key" with the mapping's lack of the key it meant, or, for a swept var
// used only there, that nothing refers to it.
func TestVarInAKey(t *testing.T) {
	for _, c := range []struct{ head, kernel, want string }{
		{"vars: {k: duration}", `{"${k}": 1 ms, stream: gpu0/s}`,
			`s.yaml:7:18: threads[0].ops[0].kernel.${k}: ${k} in a key is not replaced: vars stand for values, not for keys; write the key itself ("duration" here)`},
		{"sweep: {k: [duration, flops]}", `{"${k}": 1 ms, stream: gpu0/s}`,
			`s.yaml:7:18: threads[0].ops[0].kernel.${k}: ${k} in a key is not replaced: vars stand for values, not for keys; write the key itself ("duration" here)`},
		{"vars: {d: 1 ms}", `{"${x}": 1, duration: "${d}", stream: gpu0/s}`,
			`s.yaml:7:18: threads[0].ops[0].kernel.${x}: ${x} in a key is not replaced: vars stand for values, not for keys; write the key itself`},
		{"vars: {a: dur, b: ation}", `{"${a}${b}": 1 ms, stream: gpu0/s}`,
			`s.yaml:7:18: threads[0].ops[0].kernel.${a}${b}: ${a}, ${b} in a key are not replaced: vars stand for values, not for keys; write the key itself ("duration" here)`},
		// At the top of the file: the same, and no word of the swept var
		// being unused.
		{"sweep: {k: [a, b]}\n\"${k}\": 1", `{duration: 1 ms, stream: gpu0/s}`,
			`s.yaml:4:1: ${k}: ${k} in a key is not replaced: vars stand for values, not for keys; write the key itself (valid keys here: name, description, topology, vars, semaphores, threads, sweep, training, pipeline, inference)`},
	} {
		src := "name: s\ntopology: pcie-2gpu\n" + c.head + "\nthreads:\n  - name: t\n    ops:\n      - kernel: " + c.kernel + "\n"
		_, err := Load("s.yaml", []byte(src), Options{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s\nkernel: %s\ngot  %v\nwant %s", c.head, c.kernel, err, c.want)
		}
	}
}

// A var of vars: that nothing refers to is warned of at its key (it
// changes nothing: usually a misspelt name), once for the file (not with
// each point's program); one that something refers to, or only the
// topology field does, is not, nor one --set sets; past ten, the rest in
// one line.
func TestUnusedVarWarns(t *testing.T) {
	src := "name: s\ntopology: ${top}\nvars:\n  top: pcie-2gpu\n  size: 1 MB\n  sise: 2 MB\n  other: 3\n" +
		"threads:\n  - name: t\n    ops:\n      - copy: {from: cpu0, to: gpu0, bytes: \"${size}\", stream: gpu0/s}\n"
	want := []string{
		`s.yaml:6:3: vars.sise: nothing in the scenario refers to ${sise}, so its value would change nothing (did you mean "size"?)`,
		`s.yaml:7:3: vars.other: nothing in the scenario refers to ${other}, so its value would change nothing; the vars in use: top, size`,
	}
	top, err := topologies.Load("t.yaml", []byte(`name: t
hosts: [{name: cpu0}]
gpus: [{name: gpu0, model: H100-SXM, host: cpu0}]
links: [{ends: [gpu0, cpu0], type: pcie5x16}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {Topology: top}, {Set: map[string]string{"size": "2 MB"}}} {
		sc, err := Load("s.yaml", []byte(src), opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sc.Warnings, want) {
			t.Errorf("%+v: warnings\n%q\nwant\n%q", opt, sc.Warnings, want)
		}
		if len(sc.Program.Warnings) != 0 {
			t.Errorf("the program carries the file's warnings: %q", sc.Program.Warnings)
		}
	}
	used := strings.Replace(src, "vars:", "description: ${sise} and ${other}\nvars:", 1)
	if sc, err := Load("s.yaml", []byte(used), Options{}); err != nil {
		t.Fatal(err)
	} else if len(sc.Warnings) != 0 {
		t.Errorf("every var used: warnings %q", sc.Warnings)
	}
	var many strings.Builder
	many.WriteString("name: s\ntopology: pcie-2gpu\nvars:\n")
	for i := range 13 {
		fmt.Fprintf(&many, "  v%d: 1\n", i)
	}
	many.WriteString("threads: [{name: t, ops: [{host: {duration: 1 us}}]}]\n")
	sc, err := Load("s.yaml", []byte(many.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sc.Warnings); n != 11 || sc.Warnings[10] != "s.yaml:14:3: vars: and 3 more vars that nothing refers to: v10, v11, v12" {
		t.Errorf("13 unused vars: %d warnings, the last %q", n, sc.Warnings[n-1])
	}
}

// A kernel given by the roofline is marked memory-bound when its bytes set
// its time: 1 GB on an H100 (3.35 TB/s x 0.87: 343 us) against 1 TFLOP of
// bf16 (989.5 TFLOP/s x 0.7: 1.44 ms) is not; 10 GB (3.43 ms) is; bytes
// alone are; a duration is not.
func TestKernelsMarkedMemoryBound(t *testing.T) {
	sc, err := Load("s.yaml", []byte(`name: mb
topology: dgx-h100
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {id: a, stream: gpu0/s, flops: 1 TFLOP, dtype: bf16, bytes: 1 GB}
      - kernel: {id: b, stream: gpu0/s, flops: 1 TFLOP, dtype: bf16, bytes: 10 GB}
      - kernel: {id: c, stream: gpu0/s, bytes: 1 MB}
      - kernel: {id: d, stream: gpu0/s, duration: 1 us}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, true, true, false} {
		if op := sc.Program.Threads[0].Ops[i]; op.MemoryBound != want {
			t.Errorf("%s: memory-bound %v, want %v", op.ID, op.MemoryBound, want)
		}
	}
}
