package sim_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

// engineScenario is the pure-engine workload: 8 threads, each launching
// kernels on two streams of its GPU with event waits between them and a
// little host work, no transfers.
func engineScenario(iters int) (topo, scen string) {
	topo = `
name: eng
hosts: [{name: cpu0, api_overhead: 2 us}]
gpus: [`
	var gs, ls []string
	for g := 0; g < 8; g++ {
		gs = append(gs, fmt.Sprintf("{name: gpu%d, model: H100-SXM}", g))
		ls = append(ls, fmt.Sprintf("{ends: [gpu%d, cpu0], type: pcie5x16}", g))
	}
	topo += strings.Join(gs, ", ") + "]\nlinks: [" + strings.Join(ls, ", ") + "]\n"
	var b strings.Builder
	b.WriteString("name: eng\ntopology: topo.yaml\nthreads:\n")
	for g := 0; g < 8; g++ {
		fmt.Fprintf(&b, `  - name: t%d
    ops:
      - repeat:
          count: %d
          ops:
            - kernel: {stream: gpu%d/a, duration: 5 us}
            - record: {event: e%d, stream: gpu%d/a}
            - wait: {event: e%d, stream: gpu%d/b}
            - kernel: {stream: gpu%d/b, duration: 3 us, sm_share: 0.5}
            - host: {duration: 1 us}
      - sync: {device: gpu%d}
`, g, iters, g, g, g, g, g, g, g)
	}
	return topo, b.String()
}

// BenchmarkEngine reports simulated events per second of wall time on the
// pure-engine workload: of the whole run (events/s: validating the program,
// the event loop, and the statistics and critical path after it), and of
// the event loop alone (loop-events/s), the engine proper.
func BenchmarkEngine(b *testing.B) {
	topo, scen := engineScenario(1000)
	sc := mustLoad(b, topo, scen)
	b.ReportAllocs()
	b.ResetTimer()
	var events uint64
	var loop time.Duration
	for i := 0; i < b.N; i++ {
		res, d, err := sim.RunLoopTimed(sc.Topology.Machine, sc.Program)
		if err != nil {
			b.Fatal(err)
		}
		events += res.Events
		loop += d
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/loop.Seconds(), "loop-events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sc.Program.NumOps()), "ns/op-simulated")
}

// BenchmarkFlows reports the flow solver's cost on a random tree case like
// the SimGrid comparison's (1,000 transfers over 250 links).
func BenchmarkFlows(b *testing.B) {
	c := genCase(11, 50, 200, 1000, 0.05)
	topo, scen := c.gpusimFiles()
	sc := mustLoad(b, topo, scen)
	b.ReportAllocs()
	b.ResetTimer()
	var solves uint64
	for i := 0; i < b.N; i++ {
		res, err := sim.Run(sc.Topology.Machine, sc.Program)
		if err != nil {
			b.Fatal(err)
		}
		solves += res.Solves
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/case")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(solves), "ns/solve")
}

// scaleScenario is the shipped allreduce-overlap study (data-parallel GPT-3
// 350M on a DGX H100, gradients all-reduced in 25 MiB buckets overlapped
// with the backward pass) run for steps steps: 744 ops a step.
func scaleScenario(b *testing.B, steps int) *scenarios.Scenario {
	src, ok := scenarios.ShippedSource("allreduce-overlap")
	if !ok {
		b.Fatal("no shipped allreduce-overlap")
	}
	text := strings.Replace(string(src), "steps: 2\n", fmt.Sprintf("steps: %d\n", steps), 1)
	sc, err := scenarios.Load("allreduce-overlap.yaml", []byte(text), scenarios.Options{
		Set: map[string]string{"topo": "dgx-h100", "overlap": "true", "bucket": "25 MiB"},
		ReadFile: func(p string) ([]byte, error) {
			t, _ := topologies.ShippedSource("dgx-h100")
			return t, nil
		},
		MaxOps: 1e8,
	})
	if err != nil {
		b.Fatal(err)
	}
	return sc
}

// BenchmarkScale runs the training scenario grown to about 10^4, 10^5 and
// 10^6 ops and reports the cost per op in time and allocated bytes, so that
// growth in the cost per op shows. Each size builds its scenario when it
// runs: -bench 'Scale/ops=1e5' does not load the 10^6-op one (which took
// longer than the run it was not asked for, and made most of a cachegrind
// count of the 10^5 size). The exact op count is the ops metric.
func BenchmarkScale(b *testing.B) {
	for _, size := range []struct {
		name  string
		steps int
	}{{"1e4", 14}, {"1e5", 135}, {"1e6", 1345}} {
		b.Run("ops="+size.name, func(b *testing.B) {
			sc := scaleScenario(b, size.steps)
			ops := sc.Program.NumOps()
			b.ResetTimer()
			b.ReportAllocs()
			var events uint64
			for i := 0; i < b.N; i++ {
				res, err := sim.Run(sc.Topology.Machine, sc.Program)
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*ops), "ns/op-simulated")
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
			b.ReportMetric(float64(ops), "ops")
		})
	}
}

// BenchmarkWrite writes the result of the training scenario grown to 10^5
// ops as JSON (--json) and as a Perfetto trace (--trace), to a discarding
// writer, and reports the time and bytes per op.
func BenchmarkWrite(b *testing.B) {
	sc := scaleScenario(b, 135)
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []struct {
		name  string
		write func(io.Writer, *sim.Result) error
	}{{"json", sim.WriteJSON}, {"trace", sim.WriteTrace}} {
		b.Run(w.name, func(b *testing.B) {
			var n countWriter
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := w.write(&n, res); err != nil {
					b.Fatal(err)
				}
			}
			ops := float64(b.N * len(res.Ops))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/ops, "ns/op-written")
			b.ReportMetric(float64(n)/ops, "bytes/op-written")
			b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "MB/s")
		})
	}
}

// countWriter counts and discards what is written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// rackTopology is n B200s, two a Grace over NVLink-C2C, all on one NVLS
// switch by 18 NVLink5 links (gb200-nvl72's shape at any size).
func rackTopology(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: rack%d\nhosts:\n", n)
	for h := 0; h < n/2; h++ {
		fmt.Fprintf(&b, "  - {name: grace%d, cores: 72}\n", h)
	}
	b.WriteString("gpus:\n")
	for g := 0; g < n; g++ {
		fmt.Fprintf(&b, "  - {name: gpu%d, model: B200, host: grace%d}\n", g, g/2)
	}
	b.WriteString("switches:\n  - {name: nvswitch, kind: nvswitch, nvls: true}\nlinks:\n")
	for g := 0; g < n; g++ {
		fmt.Fprintf(&b, "  - {ends: [gpu%d, nvswitch], type: nvlink5, count: 18}\n", g)
	}
	for g := 0; g < n; g++ {
		fmt.Fprintf(&b, "  - {ends: [gpu%d, grace%d], type: nvlink-c2c}\n", g, g/2)
	}
	return b.String()
}

// BenchmarkAllPairs asks for the path between every pair of GPUs of a
// 256-GPU rack, as topo show, p2p-test and nvbandwidth do: a search for
// each pair (Machine.PathBetween) against the searches kept per source
// (sim.Paths). Reports ns per pair.
func BenchmarkAllPairs(b *testing.B) {
	tp, err := topologies.Load("rack.yaml", []byte(rackTopology(256)))
	if err != nil {
		b.Fatal(err)
	}
	m := tp.Machine
	pairs := float64(len(m.GPUs) * len(m.GPUs))
	for _, v := range []struct {
		name string
		path func() func(a, c int) sim.GPUPath
	}{
		{"each", func() func(a, c int) sim.GPUPath { return m.PathBetween }},
		{"paths", func() func(a, c int) sim.GPUPath { return m.NewPaths().PathBetween }},
	} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				path := v.path()
				for a := range m.GPUs {
					for c := range m.GPUs {
						path(a, c)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pairs, "ns/pair")
		})
	}
}
