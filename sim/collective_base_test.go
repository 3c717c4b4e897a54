package sim

import (
	"fmt"
	"slices"
	"testing"
)

// TestStandaloneRateSumsATasksUses: a transfer staged through a host
// crosses the host's link both ways, loading its joint limit (100 GB/s
// both ways) twice per byte: alone it moves 50 GB/s. Held to 1/S = 1/2 on
// an oversubscribed GPU, it moves 25 GB/s, twice as long as alone, also
// when it is not one of its plan's first transfers (its standalone rate is
// then its own loads', not its plan's first transfers').
func TestStandaloneRateSumsATasksUses(t *testing.T) {
	m := &Machine{Name: "m"}
	h := m.AddHost(Host{Name: "cpu0", MemoryBandwidth: 1e15, MemcpyBandwidth: 1e12, StagingChunk: 1 << 20, StagingBuffers: 2}, true)
	sw := m.AddSwitch(Switch{Name: "sw"}, false) // no peer traffic through it
	for i := range 2 {
		g := m.AddGPU(GPU{Name: []string{"gpu0", "gpu1"}[i], Host: h, CopyEngines: 2, MemoryBandwidth: 1e15})
		m.AddLink(Link{A: m.GPUs[g].Node, B: m.Switches[sw].Node, Kind: LinkPCIe, Bandwidth: 100e9, P2P: true})
	}
	m.AddLink(Link{A: m.Switches[sw].Node, B: m.Hosts[h].Node, Kind: LinkPCIe, Bandwidth: 100e9, Duplex: 100e9, P2P: true})
	// Task 0 (1 byte within gpu0, first) then task 1 (1 GB, staged gpu0 -> gpu1).
	plan := &CollPlan{Name: "sendrecv", Ranks: []int{0, 1}, SMShare: 1, Tasks: []CollTask{
		{From: 0, To: 0, Bytes: 1, Wire: 1, Bound: inf}, // within gpu0: no link
		{From: 0, To: 1, Bytes: 1e9, Wire: 1, Bound: inf, Deps: []int{0}},
	}}
	took := func(busy bool) Time {
		p := &Program{Name: "p", Streams: []Stream{{GPU: 0, Name: "c"}, {GPU: 1, Name: "c"}, {GPU: 0, Name: "k"}, {GPU: 1, Name: "k"}}}
		var ops []Op
		if busy { // a kernel claiming each whole GPU: S = 2
			ops = append(ops, Op{ID: "k0", Kind: OpKernel, Stream: 2, SMShare: 1, Duration: 10 * Second}, Op{ID: "k1", Kind: OpKernel, Stream: 3, SMShare: 1, Duration: 10 * Second})
		}
		ops = append(ops, Op{ID: "c", Kind: OpCollective, Coll: plan, Streams: []int{0, 1}, Stream: 0})
		p.Threads = []Thread{{Name: "main", Ops: ops}}
		res, err := Run(m, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Ops {
			if r.ID == "c@gpu0" {
				return r.End - r.Begin
			}
		}
		t.Fatal("no c@gpu0")
		return 0
	}
	alone, busy := took(false), took(true)
	if r := float64(busy) / float64(alone); r < 1.98 || r > 2.02 {
		t.Errorf("staged transfer took %s alone and %s on oversubscribed GPUs (x%.3f), want twice", alone, busy, r)
	}
}

// switchMachine is n GPUs on an NVLS switch by links of 100 GB/s each way
// (no latency), and on their host by PCIe; it returns the switch's node.
func switchMachine(n int) (*Machine, int) {
	m := &Machine{Name: "j"}
	h := m.AddHost(Host{Name: "cpu0", Cores: 4, MemoryBandwidth: 1e15, MemcpyBandwidth: 1e12, StagingChunk: 1 << 20, StagingBuffers: 2}, true)
	sw := m.AddSwitch(Switch{Name: "nvs", Kind: "nvswitch", NVLS: true}, true)
	for i := 0; i < n; i++ {
		g := m.AddGPU(GPU{Name: fmt.Sprintf("gpu%d", i), Host: h, CopyEngines: 2, MemoryBandwidth: 1e15})
		m.AddLink(Link{A: m.GPUs[g].Node, B: m.Switches[sw].Node, Kind: LinkNVLink, Bandwidth: 100e9, P2P: true})
		m.AddLink(Link{A: m.GPUs[g].Node, B: m.Hosts[h].Node, Kind: LinkPCIe, Bandwidth: 10e9, P2P: true})
	}
	return m, m.Switches[sw].Node
}

// A join task ends in the event of its last dependency: tasks that depend
// on it run exactly as they would depending on its dependencies. Three
// GPUs on a switch (100 GB/s each way, no latency) send 1, 2 and 3 GB up
// (10, 20, 30 ms on their own links); each then gets 1 GB down once all
// three are up: from 30 ms to 40 ms, every rank.
func TestJoinTaskIsItsDependencies(t *testing.T) {
	m, nvs := switchMachine(3)
	ends := func(join bool) []Time {
		var tasks []CollTask
		for r := 0; r < 3; r++ {
			tasks = append(tasks, CollTask{From: r, To: -1, Switch: nvs, Bytes: float64(r+1) * 1e9, Wire: 1, Bound: inf})
		}
		up := []int{0, 1, 2}
		if join {
			tasks = append(tasks, CollTask{From: -1, To: -1, Switch: -1, Wire: 1, Bound: inf, Deps: up})
			up = []int{3}
		}
		for r := 0; r < 3; r++ {
			tasks = append(tasks, CollTask{From: -1, To: r, Switch: nvs, Bytes: 1e9, Wire: 1, Bound: inf, Deps: up})
		}
		plan := &CollPlan{Name: "allreduce", Ranks: []int{0, 1, 2}, SMShare: 0.01, Tasks: tasks}
		p := &Program{Name: "p", Streams: []Stream{{GPU: 0, Name: "c"}, {GPU: 1, Name: "c"}, {GPU: 2, Name: "c"}}}
		p.Threads = []Thread{{Name: "main", Ops: []Op{{ID: "c", Kind: OpCollective, Coll: plan, Streams: []int{0, 1, 2}, Stream: 0}}}}
		res, err := Run(m, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []Time
		for _, r := range res.Ops {
			out = append(out, r.End-r.Begin)
		}
		return out
	}
	want := []Time{40 * Millisecond, 40 * Millisecond, 40 * Millisecond}
	if got := ends(false); !slices.Equal(got, want) {
		t.Errorf("depending on every up: parts took %v, want %v", got, want)
	}
	if got := ends(true); !slices.Equal(got, want) {
		t.Errorf("through a join: parts took %v, want %v", got, want)
	}
}

// A join without dependencies ends as the collective starts, and its
// dependents start then, once each. Two GPUs on a switch (100 GB/s each
// way, no latency): gpu0 sends 1 GB up (0-10 ms) after a join of nothing,
// and gpu1 gets 1 GB down after that (10-20 ms); a second plan ends with
// a join of nothing and one of the last transfer.
func TestJoinWithoutDependencies(t *testing.T) {
	m, nvs := switchMachine(2)
	join := func(deps ...int) CollTask {
		return CollTask{From: -1, To: -1, Switch: -1, Wire: 1, Bound: inf, Deps: deps}
	}
	for _, tasks := range [][]CollTask{
		{join(), {From: 0, To: -1, Switch: nvs, Bytes: 1e9, Wire: 1, Bound: inf, Deps: []int{0}}, {From: -1, To: 1, Switch: nvs, Bytes: 1e9, Wire: 1, Bound: inf, Deps: []int{1}}},
		{{From: 0, To: -1, Switch: nvs, Bytes: 1e9, Wire: 1, Bound: inf}, {From: -1, To: 1, Switch: nvs, Bytes: 1e9, Wire: 1, Bound: inf, Deps: []int{0}}, join(), join(1)},
	} {
		plan := &CollPlan{Name: "allreduce", Ranks: []int{0, 1}, SMShare: 0.01, Tasks: tasks}
		p := &Program{Name: "p", Streams: []Stream{{GPU: 0, Name: "c"}, {GPU: 1, Name: "c"}}}
		p.Threads = []Thread{{Name: "main", Ops: []Op{{ID: "c", Kind: OpCollective, Coll: plan, Streams: []int{0, 1}, Stream: 0}}}}
		res, err := Run(m, p)
		if err != nil {
			t.Fatal(err)
		}
		var got []Time
		for _, r := range res.Ops {
			got = append(got, r.End-r.Begin)
		}
		if want := []Time{10 * Millisecond, 20 * Millisecond}; !slices.Equal(got, want) {
			t.Errorf("parts took %v, want %v", got, want)
		}
	}
}
