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

// TestPeerPathsWhereSomeRoutesForbidP2P: on random machines whose links and
// switches forbid P2P at random, a pair gets a direct path exactly where
// some route lets P2P through (a search of its own, by depth, over links
// and through switches and hosts that allow it, never through a GPU), and
// that path allows it; where the preferred route allows it, it is that one.
func TestPeerPathsWhereSomeRoutesForbidP2P(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		m := genMachine(r)
		for i := range m.Links {
			m.Links[i].P2P = r.IntN(4) > 0
		}
		for i := range m.Switches {
			m.Nodes[m.Switches[i].Node].P2P = r.IntN(3) > 0
		}
		reach := func(a, b int) bool {
			seen := map[int]bool{a: true}
			stack := []int{a}
			for len(stack) > 0 {
				u := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if u == b {
					return true
				}
				if u != a && (m.Nodes[u].Kind == NodeGPU || !m.Nodes[u].P2P) {
					continue
				}
				for _, l := range m.Links {
					v := -1
					switch {
					case l.A == u:
						v = l.B
					case l.B == u:
						v = l.A
					}
					if v >= 0 && l.P2P && !seen[v] {
						seen[v] = true
						stack = append(stack, v)
					}
				}
			}
			return false
		}
		for a := range m.GPUs {
			for b := range m.GPUs {
				if a == b {
					continue
				}
				na, nb := m.GPUs[a].Node, m.GPUs[b].Node
				p := m.PathBetween(a, b)
				direct := p.Kind == PathNVLink || p.Kind == PathP2P
				if direct != reach(na, nb) {
					t.Fatalf("seed %d: gpu%d to gpu%d: %v, but a route allowing P2P exists: %v", seed, a, b, p.Kind, reach(na, nb))
				}
				if !direct {
					continue
				}
				if !m.p2pAllowed(na, p.Route) || m.FormatRoute(na, p.Route) == m.Nodes[na].Name {
					t.Fatalf("seed %d: gpu%d to gpu%d: route %s does not allow P2P", seed, a, b, m.FormatRoute(na, p.Route))
				}
				if pref, ok := m.Route(na, nb); ok && m.p2pAllowed(na, pref) && fmt.Sprint(pref) != fmt.Sprint(p.Route) {
					t.Fatalf("seed %d: gpu%d to gpu%d: %s, not the preferred route %s, which allows P2P", seed, a, b, m.FormatRoute(na, p.Route), m.FormatRoute(na, pref))
				}
			}
		}
	}
}
