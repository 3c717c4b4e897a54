package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// nvlinkDetour is a machine where the NVLink-only route is longer than the
// PCIe one: two GPUs under one PCIe switch (two hops), and NVLink between
// them only through two NVSwitches (three hops), with a third GPU on NVLink.
func nvlinkDetour() *Machine {
	m := &Machine{Name: "detour"}
	h := m.AddHost(Host{Name: "cpu0", MemoryBandwidth: 1e11}, true)
	sw := m.AddSwitch(Switch{Name: "plx", Kind: "pcie"}, true)
	m.AddLink(Link{A: m.Switches[sw].Node, B: m.Hosts[h].Node, Kind: LinkPCIe, Bandwidth: 32e9, P2P: true})
	var g [3]int
	for i := range g {
		g[i] = m.AddGPU(GPU{Name: fmt.Sprintf("gpu%d", i), Host: h, CopyEngines: 1, MemoryBandwidth: 1e12})
		m.AddLink(Link{A: m.GPUs[g[i]].Node, B: m.Switches[sw].Node, Kind: LinkPCIe, Bandwidth: 32e9, P2P: true})
	}
	nv0 := m.AddSwitch(Switch{Name: "nv0", Kind: "nvswitch"}, true)
	nv1 := m.AddSwitch(Switch{Name: "nv1", Kind: "nvswitch"}, true)
	m.AddLink(Link{A: m.GPUs[g[0]].Node, B: m.Switches[nv0].Node, Kind: LinkNVLink, Bandwidth: 1e11, P2P: true})
	m.AddLink(Link{A: m.Switches[nv0].Node, B: m.Switches[nv1].Node, Kind: LinkNVLink, Bandwidth: 1e11, P2P: true})
	m.AddLink(Link{A: m.Switches[nv1].Node, B: m.GPUs[g[1]].Node, Kind: LinkNVLink, Bandwidth: 1e11, P2P: true})
	m.AddLink(Link{A: m.GPUs[g[2]].Node, B: m.Switches[nv0].Node, Kind: LinkNVLink, Bandwidth: 1e11, P2P: true})
	return m
}

// TestRouteTreesMatchRoute checks the per-source search trees against
// Machine.Route, and the GPU paths found through them against PathBetween,
// StagedPath and CollectivePath, for every pair of random machines (hosts,
// switches, GPUs, PCIe and NVLink) and of one where the NVLink route is the
// longer; with the trees kept and with the budget spent.
func TestRouteTreesMatchRoute(t *testing.T) {
	machines := []*Machine{nvlinkDetour()}
	for seed := uint64(1); seed <= 200; seed++ {
		machines = append(machines, genMachine(rand.New(rand.NewPCG(seed, 9))))
	}
	for i, m := range machines {
		kept, spent := newRouteTrees(m), newRouteTrees(m)
		spent.entries = routeTreesBudget
		for a := range m.Nodes {
			for b := range m.Nodes {
				want, wok := m.Route(a, b)
				for _, tr := range []*routeTrees{kept, spent} {
					got, ok := tr.route(a, b)
					if ok != wok || fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("machine %d: %s to %s: got %v %v, want %v %v", i, m.Nodes[a].Name, m.Nodes[b].Name, got, ok, want, wok)
					}
				}
			}
		}
		for a := range m.GPUs {
			for b := range m.GPUs {
				for _, tr := range []*routeTrees{kept, spent} {
					for _, c := range []struct {
						name      string
						got, want GPUPath
					}{
						{"path", m.pathBetween(tr, a, b), m.PathBetween(a, b)},
						{"staged path", m.stagedPath(tr, a, b), m.StagedPath(a, b)},
						{"collective path", m.collectivePath(tr, a, b), m.CollectivePath(a, b)},
					} {
						if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
							t.Fatalf("machine %d: %s from gpu%d to gpu%d: got %v, want %v", i, c.name, a, b, c.got, c.want)
						}
					}
				}
			}
		}
		if len(spent.trees) != 0 {
			t.Fatalf("machine %d: %d trees kept past the budget", i, len(spent.trees))
		}
	}
	// The detour machine prefers NVLink for gpu0 to gpu1.
	if r, _ := machines[0].Route(machines[0].GPUs[0].Node, machines[0].GPUs[1].Node); len(r.Hops) != 3 {
		t.Errorf("detour machine: gpu0 to gpu1 in %d hops, want the 3 of NVLink", len(r.Hops))
	}
}
