package sim_test

import (
	"fmt"
	"strings"
	"testing"

	"gpusim/sim"
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
// pure-engine workload.
func BenchmarkEngine(b *testing.B) {
	topo, scen := engineScenario(1000)
	sc := mustLoad(b, topo, scen)
	b.ReportAllocs()
	b.ResetTimer()
	var events uint64
	for i := 0; i < b.N; i++ {
		res, err := sim.Run(sc.Topology.Machine, sc.Program)
		if err != nil {
			b.Fatal(err)
		}
		events += res.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
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
