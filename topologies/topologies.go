// Package topologies loads machine descriptions: YAML files of hosts (CPU
// sockets), GPUs, switches and links, read strictly (unknown keys are errors,
// every problem is reported with file:line:col), resolved against the presets
// in models, validated, and built into a sim.Machine. The topologies shipped
// with gpusim are embedded in the binary and can be named instead of a path.
//
//	t, err := topologies.LoadShipped("pcie-2gpu")
//	// t.Machine is ready for sim.Run; t.GPUModels[i] is GPU i's model.
package topologies

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"gpusim/internal/spec"
	"gpusim/internal/units"
	"gpusim/models"
	"gpusim/sim"
)

//go:embed *.yaml
var shipped embed.FS

// Topology is a loaded machine.
type Topology struct {
	Name        string
	Description string
	// File is where it came from: a path, or "topologies/NAME.yaml" for a
	// shipped one.
	File    string
	Machine *sim.Machine
	// GPUModels is each GPU's model with the topology's overrides applied.
	GPUModels []models.GPU
	// LinkTypes is each link's preset name, or "" for a link given by numbers;
	// LinkCounts is how many parallel links it bundles.
	LinkTypes  []string
	LinkCounts []int
	// TimingOverhead is, per host, the host time gpusim's hw backend adds
	// to each op it runs to time it (an event record and its bookkeeping):
	// replay charges it to the kernels, copies, records and waits it
	// predicts (sim.Host.TimingOverhead), as the backend runs them; gpusim
	// run leaves it out, as a program of the user's own has no such cost.
	// gpusim calibrate measures it.
	TimingOverhead []sim.Time
}

// Shipped returns the names of the embedded topologies, sorted.
func Shipped() []string {
	ents, _ := shipped.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// ShippedSource returns the YAML of a shipped topology.
func ShippedSource(name string) ([]byte, bool) {
	b, err := shipped.ReadFile(name + ".yaml")
	return b, err == nil
}

// LoadShipped loads an embedded topology by name.
func LoadShipped(name string) (*Topology, error) {
	b, ok := ShippedSource(name)
	if !ok {
		return nil, fmt.Errorf("no shipped topology named %q; shipped: %s", name, strings.Join(Shipped(), ", "))
	}
	return Load(path.Join("topologies", name+".yaml"), b)
}

// Load reads a topology from data; file names it in messages.
func Load(file string, data []byte) (*Topology, error) {
	d, root, err := spec.Parse(file, data)
	if err != nil {
		return nil, err
	}
	if err := root.WrongKind("a topology", "a scenario", "gpusim run "+file+" runs it",
		spec.TopologyKeys, spec.ScenarioKeys); err != nil {
		return nil, err
	}
	t := build(root)
	if err := d.Err(); err != nil {
		return nil, err
	}
	if err := t.Machine.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return t, nil
}

// maxHostCores is the most cores a host may have: 2^20 logical CPUs.
const maxHostCores = 1 << 20

// minStagingChunk is the smallest staging chunk accepted: a page. Smaller
// chunks would only multiply events without changing what is modelled.
const minStagingChunk = 4096

type named struct {
	node spec.Node
	idx  int // node index in the machine
}

func build(root spec.Node) *Topology {
	top, _ := root.Map("name", "description", "hosts", "gpus", "switches", "links")
	t := &Topology{File: root.Pos(), Machine: &sim.Machine{}}
	t.File = strings.SplitN(root.Pos(), ":", 2)[0]
	m := t.Machine
	if n, ok := top.Require("name", "the topology's name"); ok {
		t.Name, _ = n.Name()
	}
	m.Name = t.Name
	if n, ok := top.Get("description"); ok {
		t.Description, _ = n.Scalar()
	}
	names := map[string]named{}
	claim := func(n spec.Node) (string, bool) {
		s, ok := n.Name()
		if !ok {
			return "", false
		}
		if prev, dup := names[s]; dup {
			n.Errorf("duplicate name %q (first at %s)", s, prev.node.Pos())
			return "", false
		}
		return s, true
	}
	// Hosts.
	hostsN, ok := top.Require("hosts", "a list of hosts (CPU sockets)")
	if ok {
		list, _ := hostsN.Seq()
		if len(list) == 0 && hostsN.Valid() {
			hostsN.Errorf("a topology needs at least one host")
		}
		for _, hn := range list {
			hm, ok := hn.Map("name", "cores", "api_overhead", "memcpy_bandwidth", "pageable_h2d_bandwidth", "pageable_d2h_bandwidth", "memory_bandwidth", "p2p", "staging_chunk", "staging_buffers", "staging_handoff", "staging_setup", "graph_launch", "sync_latency", "timing_overhead")
			if !ok {
				continue
			}
			h := sim.Host{
				APIOverhead:     models.DefaultAPIOverhead,
				GraphLaunch:     models.DefaultGraphLaunch,
				SyncLatency:     models.DefaultSyncLatency,
				MemcpyBandwidth: models.DefaultMemcpyBandwidth,
				MemoryBandwidth: models.DefaultMemoryBandwidth,
				StagingChunk:    models.DefaultStagingChunk,
				StagingBuffers:  models.DefaultStagingBuffers,
				StagingHandoff:  models.DefaultStagingHandoff,
				StagingSetup:    models.DefaultStagingSetup,
			}
			p2p := true
			var nameNode spec.Node
			if n, ok := hm.Require("name", "the host's name, such as cpu0"); ok {
				nameNode = n
				h.Name, ok = claim(n)
				if !ok {
					continue
				}
			} else {
				continue
			}
			if n, ok := hm.Get("cores"); ok {
				v, _ := n.Int(0, maxHostCores)
				h.Cores = int(v)
			}
			if n, ok := hm.Get("api_overhead"); ok {
				h.APIOverhead, _ = n.Time(spec.NonNeg)
			}
			if n, ok := hm.Get("graph_launch"); ok {
				h.GraphLaunch, _ = n.Time(spec.NonNeg)
			}
			if n, ok := hm.Get("sync_latency"); ok {
				h.SyncLatency, _ = n.Time(spec.NonNeg)
			}
			var timing sim.Time
			if n, ok := hm.Get("timing_overhead"); ok {
				timing, _ = n.Time(spec.NonNeg)
			}
			if n, ok := hm.Get("memcpy_bandwidth"); ok {
				h.MemcpyBandwidth = bandwidth(n)
			}
			if n, ok := hm.Get("pageable_h2d_bandwidth"); ok {
				h.PageableH2D = bandwidth(n)
			}
			if n, ok := hm.Get("pageable_d2h_bandwidth"); ok {
				h.PageableD2H = bandwidth(n)
			}
			if n, ok := hm.Get("memory_bandwidth"); ok {
				h.MemoryBandwidth = bandwidth(n)
			}
			if n, ok := hm.Get("p2p"); ok {
				p2p, _ = n.Bool()
			}
			if n, ok := hm.Get("staging_chunk"); ok {
				if v, ok := n.ByteCount(spec.StrictlyPos); ok {
					if v < minStagingChunk {
						s, _ := n.Scalar()
						n.Errorf("%s is below the smallest staging chunk, 4 KiB (a page)", s)
					}
					h.StagingChunk = v
				}
			}
			if n, ok := hm.Get("staging_handoff"); ok {
				h.StagingHandoff, _ = n.Time(spec.NonNeg)
			}
			if n, ok := hm.Get("staging_setup"); ok {
				h.StagingSetup, _ = n.Time(spec.NonNeg)
			}
			if n, ok := hm.Get("staging_buffers"); ok {
				v, _ := n.Int(1, 1024)
				h.StagingBuffers = int(v)
			}
			i := m.AddHost(h, p2p)
			names[h.Name] = named{nameNode, m.Hosts[i].Node}
			t.TimingOverhead = append(t.TimingOverhead, timing)
		}
	}
	// Switches (before GPUs so names are known for links in any order).
	if sn, ok := top.Get("switches"); ok {
		list, _ := sn.Seq()
		for _, n := range list {
			sm, ok := n.Map("name", "kind", "p2p", "nvls")
			if !ok {
				continue
			}
			s := sim.Switch{Kind: "pcie"}
			p2p := true
			nn, ok := sm.Require("name", "the switch's name, such as sw0")
			if !ok {
				continue
			}
			if s.Name, ok = claim(nn); !ok {
				continue
			}
			if k, ok := sm.Get("kind"); ok {
				s.Kind, _ = k.Enum("pcie", "nvswitch")
			}
			if k, ok := sm.Get("p2p"); ok {
				p2p, _ = k.Bool()
			}
			if k, ok := sm.Get("nvls"); ok {
				s.NVLS, _ = k.Bool()
				if s.NVLS && s.Kind != "nvswitch" {
					k.Errorf("nvls (in-switch reduction) needs kind: nvswitch")
				}
			}
			i := m.AddSwitch(s, p2p)
			names[s.Name] = named{nn, m.Switches[i].Node}
		}
	}
	// GPUs.
	type gpuHost struct {
		node spec.Node
		name string
	}
	var gpuHosts []gpuHost
	if gn, ok := top.Require("gpus", "a list of GPUs"); ok {
		list, _ := gn.Seq()
		if len(list) == 0 && gn.Valid() {
			gn.Errorf("a topology needs at least one GPU")
		}
		for _, n := range list {
			gm, ok := n.Map("name", "model", "host", "copy_engines", "copy_overhead", "memory_bandwidth",
				"kernel_overhead", "compute_efficiency", "memory_efficiency", "peak")
			if !ok {
				continue
			}
			nn, ok := gm.Require("name", "the GPU's name, such as gpu0")
			if !ok {
				continue
			}
			name, ok := claim(nn)
			if !ok {
				continue
			}
			var model models.GPU
			if mn, ok := gm.Require("model", "a GPU model: "+strings.Join(models.GPUNames(), ", ")); ok {
				if s, ok := mn.Scalar(); ok {
					if model, ok = models.LookupGPU(s); !ok {
						mn.Errorf("unknown GPU model %q; known models: %s", s, strings.Join(models.GPUNames(), ", "))
					}
				}
			}
			if model.Peak == nil {
				model.Peak = map[models.DType]float64{}
			}
			if x, ok := gm.Get("copy_engines"); ok {
				v, _ := x.Int(1, 65536)
				model.CopyEngines = int(v)
			}
			if x, ok := gm.Get("copy_overhead"); ok {
				model.CopyOverhead, _ = x.Time(spec.NonNeg)
			}
			if x, ok := gm.Get("kernel_overhead"); ok {
				model.KernelOverhead, _ = x.Time(spec.NonNeg)
			}
			if x, ok := gm.Get("memory_bandwidth"); ok {
				model.MemoryBandwidth = bandwidth(x)
			}
			if x, ok := gm.Get("compute_efficiency"); ok {
				model.ComputeEfficiency = efficiency(x)
			}
			if x, ok := gm.Get("memory_efficiency"); ok {
				model.MemoryEfficiency = efficiency(x)
			}
			if x, ok := gm.Get("peak"); ok {
				var dn []string
				for _, d := range models.DTypes {
					dn = append(dn, string(d))
				}
				pm, _ := x.Map(dn...)
				for _, k := range pm.Keys() {
					v, _ := pm.Get(k)
					if d, ok := models.ParseDType(k); ok {
						if r, ok := v.Quantity(units.FLOPRate, spec.StrictlyPos); ok {
							model.Peak[d] = r
						}
					}
				}
			}
			hostName := ""
			hn, hasHost := gm.Get("host")
			if hasHost {
				hostName, _ = hn.Name()
			} else if len(m.Hosts) == 1 {
				hostName = m.Hosts[0].Name
			} else if len(m.Hosts) > 1 {
				gm.Node().Errorf("missing \"host\": the CPU socket this GPU is attached to (one of %s)", hostList(m))
			}
			gpuHosts = append(gpuHosts, gpuHost{hn, hostName})
			g := sim.GPU{
				Name: name, Model: model.Name, Host: -1,
				CopyEngines: model.CopyEngines, CopyOverhead: model.CopyOverhead,
				MemoryBandwidth: float64(model.MemoryBandwidth * model.MemoryEfficiency),
			}
			// What the simulator uses is the product; each may be in range
			// while it is not.
			if eff := g.MemoryBandwidth; eff > 0 && eff < 1 {
				at := gm.Node()
				if x, ok := gm.Get("memory_bandwidth"); ok {
					at = x
				} else if x, ok := gm.Get("memory_efficiency"); ok {
					at = x
				}
				at.Errorf("memory_bandwidth x memory_efficiency is %g B/s, below 1 B/s: raise either", eff)
			}
			i := m.AddGPU(g)
			t.GPUModels = append(t.GPUModels, model)
			names[name] = named{nn, m.GPUs[i].Node}
		}
	}
	for i, gh := range gpuHosts {
		if gh.name == "" {
			continue
		}
		nd, ok := names[gh.name]
		if !ok || m.Nodes[nd.idx].Kind != sim.NodeHost {
			gh.node.Errorf("%q is not a host of this topology; hosts: %s", gh.name, hostList(m))
			continue
		}
		m.GPUs[i].Host = m.Nodes[nd.idx].Index
	}
	// Links.
	errsBefore := root.ErrCount()
	var latencySum sim.Time
	// pairs holds each pair of ends' first link of each kind and p2p
	// setting, for the one a second like it would shadow.
	type pairKey struct {
		a, b int
		kind sim.LinkKind
		p2p  bool
	}
	pairs := map[pairKey]spec.Node{}
	if ln, ok := top.Require("links", "a list of links between hosts, GPUs and switches"); ok {
		list, _ := ln.Seq()
		for _, n := range list {
			lm, ok := n.Map("name", "ends", "type", "kind", "bandwidth", "sm_bandwidth", "duplex_bandwidth", "latency", "count", "p2p")
			if !ok {
				continue
			}
			l := sim.Link{P2P: true, A: -1, B: -1}
			if x, ok := lm.Get("name"); ok {
				l.Name, _ = x.Name()
			}
			if x, ok := lm.Require("ends", "the two things it connects, such as [gpu0, sw0]"); ok {
				ends, _ := x.Seq()
				if ends != nil && len(ends) != 2 {
					x.Errorf("a link has exactly two ends, got %d", len(ends))
				} else if len(ends) == 2 {
					for j, e := range ends {
						s, ok := e.Name()
						if !ok {
							continue
						}
						nd, ok := names[s]
						if !ok {
							e.Errorf("%q is not a host, GPU or switch of this topology; names: %s", s, strings.Join(sortedNames(names), ", "))
							continue
						}
						if j == 0 {
							l.A = nd.idx
						} else {
							l.B = nd.idx
						}
					}
					if l.A >= 0 && l.A == l.B {
						x.Errorf("a link cannot connect %s to itself", m.Nodes[l.A].Name)
						l.B = -1
					}
				}
			}
			count := 1
			if x, ok := lm.Get("count"); ok {
				if v, ok := x.Int(1, 1024); ok {
					count = int(v)
				} // else said there; the bandwidths are read as one link's
			}
			preset := ""
			var lt models.LinkType
			haveType := false
			if x, ok := lm.Get("type"); ok {
				if s, ok := x.Scalar(); ok {
					if lt, haveType = models.LookupLink(s); haveType {
						preset = lt.Name
						l.Kind, l.Bandwidth, l.Latency, l.P2P = lt.Kind, lt.Bandwidth()*float64(count), lt.Latency, lt.P2P
						l.SMBandwidth = lt.SMBandwidth() * float64(count)
					} else {
						x.Errorf("unknown link type %q; known types: %s", s, strings.Join(models.LinkNames(), ", "))
					}
				}
			}
			bwNode, haveBW := lm.Get("bandwidth")
			if haveBW {
				l.Bandwidth = bandwidthTimes(bwNode, count) * float64(count)
				l.SMBandwidth = l.Bandwidth
				if haveType {
					// Kernel-driven transfers keep the preset's ratio.
					l.SMBandwidth = smBandwidthOf(lt, l.Bandwidth)
				}
			} else if !haveType {
				if _, typed := lm.Get("type"); !typed {
					lm.Node().Errorf("a link needs a type (%s) or a bandwidth", strings.Join(models.LinkNames(), ", "))
				}
			}
			if x, ok := lm.Get("sm_bandwidth"); ok {
				l.SMBandwidth = bandwidthTimes(x, count) * float64(count)
			} else if haveType && haveBW && l.Bandwidth > 0 && !inBandwidthRange(l.SMBandwidth) {
				// The ratio carries a bandwidth in range out of it (1 B/s
				// of pcie4x16 is 0.918 B/s for kernels): say so here, at
				// the value given, rather than leave it to the machine's
				// check, which knows no file position and names a field
				// never written.
				typedBandwidthError(bwNode, lt, count, l.SMBandwidth)
				l.SMBandwidth = 0
			}
			if haveType && lt.Duplex > 0 {
				// The preset's joint limit, in proportion to the link's
				// bandwidth as given.
				l.Duplex = 2 * lt.Duplex * l.Bandwidth
			}
			if x, ok := lm.Get("duplex_bandwidth"); ok {
				l.Duplex = bandwidthTimes(x, count) * float64(count)
				// Within a thousandth, for values written with four
				// digits (as calibrate and the messages write them).
				if l.Bandwidth > 0 && !(l.Duplex >= l.Bandwidth*(1-1e-3) && l.Duplex <= 2*l.Bandwidth*(1+1e-3)) {
					per := ""
					if count > 1 {
						per = " a link"
					}
					b := l.Bandwidth / float64(count)
					x.Errorf("duplex_bandwidth is what both directions carry together: from one direction's bandwidth (%s%s) to twice it (%s%s)", units.Format(b, units.Bandwidth), per, units.Format(2*b, units.Bandwidth), per)
					l.Duplex = 0
				}
				l.Duplex = min(max(l.Duplex, l.Bandwidth), 2*l.Bandwidth)
				if l.Duplex >= 2*l.Bandwidth*(1-1e-3) {
					// Twice one way, written with four digits: no limit.
					l.Duplex = 2 * l.Bandwidth
				}
			}
			if x, ok := lm.Get("latency"); ok {
				l.Latency, _ = x.Time(spec.NonNeg)
				// A route's latency is a sum of link latencies: keep every
				// possible sum far inside the time range.
				if latencySum += l.Latency; latencySum > sim.MaxTime/4 || latencySum < 0 {
					v, _ := x.Scalar()
					x.Errorf("%s brings the topology's link latencies to more than %d days in all, past what a route may take", v, int64((sim.MaxTime/4).Seconds()/86400))
					l.Latency = 0
				}
			}
			kindGiven := false
			if x, ok := lm.Get("kind"); ok {
				if s, ok := x.Enum("pcie", "nvlink", "socket", "c2c", "other"); ok {
					l.Kind = map[string]sim.LinkKind{"pcie": sim.LinkPCIe, "nvlink": sim.LinkNVLink, "socket": sim.LinkSocket, "c2c": sim.LinkC2C, "other": sim.LinkOther}[s]
					kindGiven = true
					if !haveType {
						l.P2P = l.Kind != sim.LinkSocket
					}
				}
			}
			if !haveType && !kindGiven && l.A >= 0 && l.B >= 0 {
				l.Kind = inferKind(m, l.A, l.B)
				l.P2P = l.Kind != sim.LinkSocket
			}
			if x, ok := lm.Get("p2p"); ok {
				l.P2P, _ = x.Bool()
			}
			if l.A < 0 || l.B < 0 {
				continue
			}
			// Routes choose between links by kind (NVLink first) and by
			// whether peer copies may cross them, then take the first
			// declared: a second link like the first would carry nothing.
			pair := pairKey{min(l.A, l.B), max(l.A, l.B), l.Kind, l.P2P}
			if first, dup := pairs[pair]; dup {
				lm.Node().Errorf("a second %s link between %s and %s, like the one at %s: a route takes the first of such links, so this one would carry nothing; for parallel links give the first count: N (or its bandwidth in all)", l.Kind, m.Nodes[l.A].Name, m.Nodes[l.B].Name, first.Pos())
				continue
			}
			pairs[pair] = lm.Node()
			if l.Name != "" {
				if prev, dup := names[l.Name]; dup {
					lm.Node().Errorf("duplicate name %q (first at %s)", l.Name, prev.node.Pos())
					continue
				}
				names[l.Name] = named{lm.Node(), -1}
			}
			m.AddLink(l)
			t.LinkTypes = append(t.LinkTypes, preset)
			t.LinkCounts = append(t.LinkCounts, count)
		}
	}
	// Every GPU must reach its host (checked only when the links are sound,
	// so that a bad link is reported once, not as a missing connection too).
	for i, g := range m.GPUs {
		if g.Host < 0 || root.ErrCount() > errsBefore {
			continue
		}
		if _, ok := m.Route(m.Hosts[g.Host].Node, g.Node); !ok {
			names[g.Name].node.Errorf("GPU %s has no route to its host %s (a route never passes through another GPU): add a link from %s to %s, or to a switch that reaches it", g.Name, m.Hosts[g.Host].Name, g.Name, m.Hosts[g.Host].Name)
		}
		_ = i
	}
	return t
}

func inferKind(m *sim.Machine, a, b int) sim.LinkKind {
	na, nb := m.Nodes[a], m.Nodes[b]
	isNV := func(n sim.Node) bool {
		return n.Kind == sim.NodeGPU || (n.Kind == sim.NodeSwitch && m.Switches[n.Index].Kind == "nvswitch")
	}
	switch {
	case na.Kind == sim.NodeHost && nb.Kind == sim.NodeHost:
		return sim.LinkSocket
	case isNV(na) && isNV(nb):
		return sim.LinkNVLink
	}
	return sim.LinkPCIe
}

// bandwidth reads a bandwidth between 1 B/s and 1 EB/s.
func bandwidth(n spec.Node) float64 {
	return bandwidthTimes(n, 1)
}

// bandwidthTimes reads a bandwidth that will be multiplied by count (parallel
// links), checking the product's range.
func bandwidthTimes(n spec.Node, count int) float64 {
	v, ok := n.Quantity(units.Bandwidth, spec.StrictlyPos)
	if !ok {
		return 0
	}
	s, _ := n.Scalar()
	switch t := v * float64(count); {
	case t < 1:
		n.Errorf("%s is below 1 B/s: not a plausible bandwidth", s)
		return 0
	case t > 1e18:
		if count == 1 {
			n.Errorf("%s is above 1 EB/s: not a plausible bandwidth", s)
		} else {
			n.Errorf("%s x %d links is above 1 EB/s: not a plausible bandwidth", s, count)
		}
		return 0
	}
	return v
}

// inBandwidthRange reports whether v is a bandwidth the machine accepts:
// from 1 B/s to 1 EB/s.
func inBandwidthRange(v float64) bool { return v >= 1 && v <= 1e18 }

// smBandwidthOf is the kernel-driven bandwidth of a link of preset lt given
// the copy-engine bandwidth bw (all its parallel links together): the
// preset's ratio of the two applied to bw.
func smBandwidthOf(lt models.LinkType, bw float64) float64 {
	return float64(bw * lt.SMEfficiency / lt.Efficiency)
}

// typedBandwidthError reports, at the bandwidth n given to a link of type lt
// bundling count links, that the kernel-driven bandwidth sm derived from it
// is out of range, and names the bandwidths (one link's) that are not: both
// the bandwidth and the derived one in range, each bound written so that
// read back it is in range too.
func typedBandwidthError(n spec.Node, lt models.LinkType, count int, sm float64) {
	ok := func(v float64) bool {
		t := v * float64(count)
		return inBandwidthRange(t) && inBandwidthRange(smBandwidthOf(lt, t))
	}
	r := lt.SMEfficiency / lt.Efficiency
	lo := max(1, 1/r) / float64(count)
	hi := min(1e18, 1e18/r) / float64(count)
	// Four digits, moved toward the inside of the range until the text
	// itself is in range (1/0.918 = 1.0892... is written 1.09, not 1.089).
	bound := func(v, step float64) string {
		for range 64 {
			s := units.Format(v, units.Bandwidth)
			if v >= 1e15 { // units.Format stops at TB/s
				s = strconv.FormatFloat(v/1e18, 'g', 4, 64) + " EB/s"
			}
			if p, err := units.Parse(s, units.Bandwidth); err == nil && ok(p) {
				return s
			}
			v *= step
		}
		return strconv.FormatFloat(v, 'g', -1, 64) + " B/s"
	}
	per := ""
	if count > 1 {
		per = " a link"
	}
	side := "below 1 B/s"
	if sm > 1 {
		side = "above 1 EB/s"
	}
	s, _ := n.Scalar()
	if count > 1 {
		s = fmt.Sprintf("%s x %d links", s, count)
	}
	n.Errorf("%s makes kernel-driven transfers %s, %s (%s keeps %.4g of the bandwidth for them): give a bandwidth from %s to %s%s, or an sm_bandwidth of its own",
		s, units.Format(sm, units.Bandwidth), side, lt.Name, r, bound(lo, 1+1e-4), bound(hi, 1-1e-4), per)
}

func efficiency(n spec.Node) float64 {
	v, _ := n.Fraction("efficiency")
	return v
}

func hostList(m *sim.Machine) string {
	var out []string
	for _, h := range m.Hosts {
		out = append(out, h.Name)
	}
	return strings.Join(out, ", ")
}

func sortedNames(names map[string]named) []string {
	var out []string
	for k, v := range names {
		if v.idx >= 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
