package sim_test

import (
	"strings"
	"testing"

	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

// simulate loads a topology and a scenario given as YAML text (the scenario
// names its topology "topo.yaml") and runs it.
func simulate(t *testing.T, topo, scen string) *sim.Result {
	t.Helper()
	res, err := simulateErr(t, topo, scen)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	// Every run's critical path accounts for the whole makespan: each op
	// starts exactly when the cause it records ends.
	var sum sim.Time
	for _, s := range res.CriticalPath {
		sum += s.Time
	}
	if sum != res.Makespan {
		t.Errorf("critical path sums to %s, makespan is %s", sum, res.Makespan)
	}
	return res
}

func simulateErr(t *testing.T, topo, scen string) (*sim.Result, error) {
	t.Helper()
	if !strings.Contains(scen, "topology:") {
		scen = "topology: topo.yaml\n" + scen
	}
	sc, err := scenarios.Load("scen.yaml", []byte(scen), scenarios.Options{
		ReadFile: func(name string) ([]byte, error) {
			if name != "topo.yaml" {
				t.Fatalf("scenario reads %q, want topo.yaml", name)
			}
			return []byte(topo), nil
		},
	})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return sim.Run(sc.Topology.Machine, sc.Program)
}

// mustLoad loads a scenario whose topology is "topo.yaml" with text topo.
func mustLoad(tb testing.TB, topo, scen string) *scenarios.Scenario {
	tb.Helper()
	sc, err := scenarios.Load("scen.yaml", []byte(scen), scenarios.Options{
		ReadFile: func(string) ([]byte, error) { return []byte(topo), nil },
	})
	if err != nil {
		tb.Fatalf("load: %v", err)
	}
	return sc
}

// loadTopology parses a topology given as YAML text.
func loadTopology(t *testing.T, topo string) *topologies.Topology {
	t.Helper()
	tp, err := topologies.Load("topo.yaml", []byte(topo))
	if err != nil {
		t.Fatalf("topology: %v", err)
	}
	return tp
}

// op returns the record with that id.
func op(t *testing.T, res *sim.Result, id string) sim.OpRecord {
	t.Helper()
	for _, r := range res.Ops {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no op %q", id)
	return sim.OpRecord{}
}

// us converts microseconds (possibly fractional) to sim.Time, rounding to the
// nearest picosecond, for expected values computed by hand.
func us(x float64) sim.Time { return sim.Time(x*1e6 + 0.5) }

// near checks got against want within tol picoseconds (for values that pass
// through float rates).
func near(t *testing.T, what string, got, want sim.Time, tol sim.Time) {
	t.Helper()
	d := got - want
	if d < 0 {
		d = -d
	}
	if d > tol {
		t.Errorf("%s = %s (%d ps), want %s (%d ps)", what, got, int64(got), want, int64(want))
	}
}

// bareHost is a host with no API overhead and ample memory bandwidth, so that
// tests isolate one effect at a time.
const bareHost = `{name: cpu0, api_overhead: 0 us, sync_latency: 0 us, memory_bandwidth: 1000 GB/s, memcpy_bandwidth: 5 GB/s}`

// bareGPU is an H100 with no copy overhead or kernel overhead.
func bareGPU(name string) string {
	return `{name: ` + name + `, model: H100-SXM, host: cpu0, copy_overhead: 0 us, kernel_overhead: 0 us}`
}

// linkDir returns the statistics of the link direction from -> to.
func linkDir(t *testing.T, res *sim.Result, from, to string) sim.LinkStats {
	t.Helper()
	m := res.Machine
	for _, l := range res.Links {
		lk := m.Links[l.Link]
		a, b := m.Nodes[lk.A].Name, m.Nodes[lk.B].Name
		if l.Reverse {
			a, b = b, a
		}
		if a == from && b == to {
			return l
		}
	}
	t.Fatalf("no link %s -> %s", from, to)
	return sim.LinkStats{}
}
