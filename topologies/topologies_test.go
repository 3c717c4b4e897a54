package topologies

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gpusim/models"
	"gpusim/sim"
)

func load(t *testing.T, src string) *Topology {
	t.Helper()
	tp, err := Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return tp
}

func gpu(t *testing.T, tp *Topology, name string) int {
	t.Helper()
	i := tp.Machine.NodeIndex(name)
	if i < 0 || tp.Machine.Nodes[i].Kind != sim.NodeGPU {
		t.Fatalf("no GPU %s", name)
	}
	return tp.Machine.Nodes[i].Index
}

// A box where gpu0-gpu1 have NVLink and also share a PCIe switch, gpu2 sits
// on the same switch without NVLink, gpu3 hangs off the other socket, and
// gpu1-gpu4 have NVLink too (so gpu0 -> gpu4 would be two NVLink hops
// through gpu1, which GPUs do not forward).
const box = `
name: box
hosts: [{name: cpu0}, {name: cpu1}]
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu0}
  - {name: gpu2, model: H100-SXM, host: cpu0}
  - {name: gpu3, model: H100-SXM, host: cpu1}
  - {name: gpu4, model: H100-SXM, host: cpu0}
switches: [{name: sw0}]
links:
  - {ends: [gpu0, sw0], type: pcie5x16}
  - {ends: [gpu1, sw0], type: pcie5x16}
  - {ends: [gpu2, sw0], type: pcie5x16}
  - {ends: [gpu4, sw0], type: pcie5x16}
  - {ends: [sw0, cpu0], type: pcie5x16}
  - {ends: [gpu3, cpu1], type: pcie5x16}
  - {ends: [cpu0, cpu1], type: upi, count: 3}
  - {ends: [gpu0, gpu1], type: nvlink4, count: 4}
  - {ends: [gpu1, gpu4], type: nvlink4, count: 2}
`

func TestPathKinds(t *testing.T) {
	tp := load(t, box)
	m := tp.Machine
	for _, tc := range []struct {
		a, b  string
		kind  sim.PathKind
		route string
	}{
		{"gpu0", "gpu1", sim.PathNVLink, "gpu0 -> gpu1"},
		{"gpu0", "gpu2", sim.PathP2P, "gpu0 -> sw0 -> gpu2"},
		{"gpu0", "gpu4", sim.PathP2P, "gpu0 -> sw0 -> gpu4"}, // not through gpu1
		{"gpu0", "gpu3", sim.PathStaged, ""},                 // UPI carries no P2P
		{"gpu2", "gpu2", sim.PathLocal, ""},
	} {
		a, b := gpu(t, tp, tc.a), gpu(t, tp, tc.b)
		p := m.PathBetween(a, b)
		if p.Kind != tc.kind {
			t.Errorf("%s -> %s: %v, want %v", tc.a, tc.b, p.Kind, tc.kind)
		}
		if tc.route != "" {
			if got := m.FormatRoute(m.GPUs[a].Node, p.Route); got != tc.route {
				t.Errorf("%s -> %s: route %s, want %s", tc.a, tc.b, got, tc.route)
			}
		}
	}
	p := m.PathBetween(gpu(t, tp, "gpu0"), gpu(t, tp, "gpu3"))
	if m.Hosts[p.Host].Name != "cpu0" {
		t.Errorf("gpu0 -> gpu3 staged through %s, want cpu0 (the source's host, tied in hops with cpu1)", m.Hosts[p.Host].Name)
	}
	if got := m.FormatRoute(m.Hosts[p.Host].Node, p.FromHost); got != "cpu0 -> cpu1 -> gpu3" {
		t.Errorf("second leg %s, want cpu0 -> cpu1 -> gpu3", got)
	}
}

func TestSwitchWithoutP2PStagesCopies(t *testing.T) {
	tp, err := LoadShipped("pcie-2gpu")
	if err != nil {
		t.Fatal(err)
	}
	p := tp.Machine.PathBetween(0, 1)
	if p.Kind != sim.PathStaged || tp.Machine.Hosts[p.Host].Name != "cpu0" {
		t.Errorf("pcie-2gpu gpu0 -> gpu1: %v through host %d, want host-staged through cpu0", p.Kind, p.Host)
	}
}

func TestPresetsAndOverrides(t *testing.T) {
	tp := load(t, box)
	m := tp.Machine
	// Bundles multiply the preset: 4 NVLink4 links at 25 GB/s x 0.875.
	nv := m.Links[7]
	if want := 4 * 25e9 * 0.875; math.Abs(nv.Bandwidth-want) > 1 {
		t.Errorf("4 x nvlink4 = %g B/s, want %g", nv.Bandwidth, want)
	}
	if nv.Kind != sim.LinkNVLink {
		t.Errorf("nvlink4 kind %v", nv.Kind)
	}
	// PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 bits, times 0.88.
	if want := 32e9 * 16 * 128 / 130 / 8 * 0.88; math.Abs(m.Links[0].Bandwidth-want) > 1 {
		t.Errorf("pcie5x16 = %g B/s, want %g", m.Links[0].Bandwidth, want)
	}
	// Both ways at once: 0.90 of twice one way on Gen5 (the H200
	// calibrations), none on NVLink.
	if want := 2 * 0.90 * m.Links[0].Bandwidth; math.Abs(m.Links[0].Duplex-want) > 1 {
		t.Errorf("pcie5x16 both ways %g B/s, want %g", m.Links[0].Duplex, want)
	}
	if nv.Duplex != 0 {
		t.Errorf("nvlink4 both ways %g B/s, want no joint limit", nv.Duplex)
	}
	if m.Links[6].P2P || m.Links[6].Kind != sim.LinkSocket {
		t.Errorf("upi link: p2p %v kind %v, want no P2P, socket", m.Links[6].P2P, m.Links[6].Kind)
	}
	h := m.Hosts[0]
	if h.APIOverhead != models.DefaultAPIOverhead || h.MemoryBandwidth != models.DefaultMemoryBandwidth || h.Cores != 0 {
		t.Errorf("host defaults not applied: %+v", h)
	}
	if g := m.GPUs[0]; g.CopyEngines != 3 || g.Model != "H100-SXM" {
		t.Errorf("gpu0 from the H100 preset: %+v", g)
	}
	over := load(t, `
name: o
hosts: [{name: cpu0, cores: 8, api_overhead: 4 us, memcpy_bandwidth: 10 GB/s}]
gpus: [{name: gpu0, model: l40s, copy_engines: 1, memory_efficiency: 50%, peak: {bf16: 100 TFLOP/s}}]
links: [{ends: [gpu0, cpu0], bandwidth: 20 GB/s, latency: 2 us}]
`)
	g := over.GPUModels[0]
	if g.CopyEngines != 1 || g.MemoryEfficiency != 0.5 || g.Peak[models.BF16] != 100e12 || g.Peak[models.FP32] != 91.6e12 {
		t.Errorf("overrides not applied: %+v", g)
	}
	if l := over.Machine.Links[0]; l.Bandwidth != 20e9 || l.Latency != 2*sim.Microsecond || l.Kind != sim.LinkPCIe {
		t.Errorf("link given by numbers: %+v", l)
	}
	if h := over.Machine.Hosts[0]; h.Cores != 8 || h.APIOverhead != 4*sim.Microsecond || h.MemcpyBandwidth != 10e9 {
		t.Errorf("host overrides: %+v", h)
	}
	// A Gen4 link's joint limit: 0.72 of twice one way, of the preset's
	// bandwidth (31.5 GB/s x 0.83) or of the one given; one given outright
	// replaces it, and twice one way lifts it.
	gen4 := load(t, `
name: d
hosts: [{name: cpu0}]
gpus: [{name: gpu0, model: H100-SXM}, {name: gpu1, model: H100-SXM}, {name: gpu2, model: H100-SXM}, {name: gpu3, model: H100-SXM}]
links:
  - {ends: [gpu0, cpu0], type: pcie4x16}
  - {ends: [gpu1, cpu0], type: pcie4x16, bandwidth: 20 GB/s}
  - {ends: [gpu2, cpu0], type: pcie4x16, duplex_bandwidth: 30 GB/s}
  - {ends: [gpu3, cpu0], type: pcie4x16, bandwidth: 20 GB/s, duplex_bandwidth: 40 GB/s}
`).Machine.Links
	// Twice one way written with four digits (49.13 GB/s for 24.57 each
	// way, as calibrate writes "no limit") is no limit: exactly twice.
	snapped := load(t, `
name: s
hosts: [{name: cpu0}]
gpus: [{name: gpu0, model: H100-SXM}]
links: [{ends: [gpu0, cpu0], type: pcie4x16, bandwidth: 24.57 GB/s, duplex_bandwidth: 49.13 GB/s}]
`).Machine.Links[0]
	if snapped.Duplex != 2*snapped.Bandwidth {
		t.Errorf("49.13 GB/s both ways of 24.57 each: %g B/s, want exactly twice %g", snapped.Duplex, snapped.Bandwidth)
	}
	for i, want := range []float64{2 * 0.72 * 16e9 * 16 * 128 / 130 / 8 * 0.83, 2 * 0.72 * 20e9, 30e9, 40e9} {
		if math.Abs(gen4[i].Duplex-want) > 1 {
			t.Errorf("pcie4x16 link %d both ways %g B/s, want %g", i, gen4[i].Duplex, want)
		}
	}
}

func TestEveryProblemIsReportedAtOnce(t *testing.T) {
	_, err := Load("t.yaml", []byte(`
name: many
hosts: [{name: cpu0, cores: -1, memory_bandwidth: 10 GB}]
gpus: [{name: gpu0, model: H1000}]
links: [{ends: [gpu0, cpu0], bandwidth: 0}]
`))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 4 {
		t.Errorf("got %d problems, want 4:\n%v", len(lines), err)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "t.yaml:") {
			t.Errorf("%q does not start with the file position", l)
		}
	}
}

func TestShippedTopologiesLoad(t *testing.T) {
	names := Shipped()
	if len(names) == 0 {
		t.Fatal("no shipped topologies")
	}
	for _, n := range names {
		if _, err := LoadShipped(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := LoadShipped("nope"); err == nil || !strings.Contains(err.Error(), "pcie-2gpu") {
		t.Errorf("unknown shipped name: %v, want a list of names", err)
	}
}

// FuzzLoad checks that no topology text makes the loader panic.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(box))
	for _, n := range Shipped() {
		b, _ := ShippedSource(n)
		f.Add(b)
	}
	for _, s := range []string{"", "name: x", "hosts: [1, 2]", "{a: *b}", "a: &x [*x]", "name: x\nhosts: [{name: c}]\ngpus: [{name: g, model: H100-SXM}]\nlinks: [{ends: [g, c], bandwidth: 1e400}]"} {
		f.Add([]byte(s))
	}
	// The bad-input corpus of the command line: broken files of every kind.
	bad, _ := filepath.Glob(filepath.Join("..", "cmd", "gpusim", "testdata", "bad", "t-*.yaml"))
	for _, name := range bad {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := Load("f.yaml", data)
		if err == nil {
			if verr := tp.Machine.Validate(); verr != nil {
				t.Errorf("loaded a machine that does not validate: %v", verr)
			}
			return
		}
		// Every problem is told at its place in the file.
		for _, l := range strings.Split(err.Error(), "\n") {
			if !filePosRe.MatchString(l) {
				t.Errorf("%q names no file:line:col", l)
			}
		}
	})
}

var filePosRe = regexp.MustCompile(`^f\.yaml:\d+:\d+: `)

// A link with a type and a bandwidth of its own keeps the preset's ratio of
// kernel-driven to copy-engine bandwidth: for pcie4x16 0.762/0.83 =
// 0.91807, so 1 B/s would leave kernels 0.9181 B/s, below the 1 B/s a
// machine accepts. That bandwidth is refused where it is written, naming the
// range that is not: from 0.83/0.762 = 1.08924 B/s, written with four
// digits rounded up (1.09; 1.089 is short of it), to 1 EB/s; with count: 2,
// half of each, one link's. An sm_bandwidth of its own, or a preset whose
// ratio is 1 (upi: 0.7/0.7), leaves the bandwidth free.
func TestTypedBandwidthKeepsSMBandwidthInRange(t *testing.T) {
	for _, c := range []struct {
		link   string
		err    string  // the whole message, or "" where it loads
		wantSM float64 // the kernel-driven bandwidth where it loads
	}{
		{"type: pcie4x16, bandwidth: 1 B/s", "t.yaml:4:57: links[0].bandwidth: 1 B/s makes kernel-driven transfers 0.9181 B/s, below 1 B/s (pcie4x16 keeps 0.9181 of the bandwidth for them): give a bandwidth from 1.09 B/s to 1 EB/s, or an sm_bandwidth of its own", 0},
		{"type: pcie4x16, bandwidth: 1.089 B/s", "t.yaml:4:57: links[0].bandwidth: 1.089 B/s makes kernel-driven transfers 0.9998 B/s, below 1 B/s (pcie4x16 keeps 0.9181 of the bandwidth for them): give a bandwidth from 1.09 B/s to 1 EB/s, or an sm_bandwidth of its own", 0},
		{"type: pcie4x16, bandwidth: 0.5 B/s, count: 2", "t.yaml:4:57: links[0].bandwidth: 0.5 B/s x 2 links makes kernel-driven transfers 0.9181 B/s, below 1 B/s (pcie4x16 keeps 0.9181 of the bandwidth for them): give a bandwidth from 0.5447 B/s to 0.5 EB/s a link, or an sm_bandwidth of its own", 0},
		{"type: pcie4x16, bandwidth: 1.09 B/s", "", 1.09 * 0.762 / 0.83},
		{"type: pcie4x16, bandwidth: 0.5447 B/s, count: 2", "", 2 * 0.5447 * 0.762 / 0.83},
		{"type: pcie4x16, bandwidth: 1 B/s, sm_bandwidth: 1 B/s", "", 1},
		{"type: upi, bandwidth: 1 B/s", "", 1},
	} {
		src := "name: t\nhosts: [{name: cpu0}]\ngpus: [{name: gpu0, model: H100-SXM}]\nlinks: [{ends: [gpu0, cpu0], " + c.link + "}]\n"
		tp, err := Load("t.yaml", []byte(src))
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v\nwant %s", c.link, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.link, err)
		default:
			if got := tp.Machine.Links[0].SMBandwidth; math.Abs(got-c.wantSM) > 1e-9 {
				t.Errorf("%s: kernel-driven bandwidth %g B/s, want %g", c.link, got, c.wantSM)
			}
		}
	}
}

// Every link preset given a bandwidth of its own, anywhere in range and
// bundled or not, loads to a machine that validates or is refused at a
// file position: never by the machine's own check, which knows none. The
// bandwidths and joint limits it derives from the one given stay in range.
func TestTypedBandwidthEdges(t *testing.T) {
	for _, name := range models.LinkNames() {
		for _, count := range []int{1, 2, 1024} {
			for _, bw := range []string{"1 B/s", "1.001 B/s", "1.1 B/s", "1.2 B/s", "1.5 B/s", "2 B/s", "1 GB/s", "0.999 EB/s", "1 EB/s"} {
				link := fmt.Sprintf("type: %s, bandwidth: %s, count: %d", name, bw, count)
				src := "name: t\nhosts: [{name: cpu0}]\ngpus: [{name: gpu0, model: H100-SXM}]\nlinks: [{ends: [gpu0, cpu0], " + link + "}]\n"
				tp, err := Load("f.yaml", []byte(src))
				if err != nil {
					if !filePosRe.MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
						t.Errorf("%s: %q is not one error at a file position", link, err)
					}
					continue
				}
				if err := tp.Machine.Validate(); err != nil {
					t.Errorf("%s: %v", link, err)
				}
			}
		}
	}
}

// The GB200 NVL72 rack: 72 GPUs, two on each of 36 Graces, every pair over
// NVLink through the one switch; each GPU takes the rack's per-GPU peaks
// (the datasheet's rack totals over 72, tensor rates halved for sparsity:
// bf16 360 PFLOP/s / 72 / 2 = 2.5), given once and aliased; a Grace reaches its own GPUs over
// NVLink-C2C at 450 GB/s x 0.875 and the Graces' launches cost 3.0 us.
func TestGB200NVL72(t *testing.T) {
	tp, err := LoadShipped("gb200-nvl72")
	if err != nil {
		t.Fatal(err)
	}
	m := tp.Machine
	if len(m.GPUs) != 72 || len(m.Hosts) != 36 {
		t.Fatalf("%d GPUs on %d hosts, want 72 on 36", len(m.GPUs), len(m.Hosts))
	}
	for g := range m.GPUs {
		if h := m.Hosts[m.GPUs[g].Host].Name; h != "grace"+strconv.Itoa(g/2) {
			t.Errorf("gpu%d on %s, want grace%d", g, h, g/2)
		}
		// The rack's totals over 72: tensor rates halved for sparsity.
		for d, want := range map[models.DType]float64{models.BF16: 360e15 / 72 / 2, models.FP8: 720e15 / 72 / 2,
			models.TF32: 180e15 / 72 / 2, models.FP32: 6480e12 / 72, models.FP64: 3240e12 / 72} {
			if got := tp.GPUModels[g].Peak[d]; math.Abs(got-want) > 1e-6*want {
				t.Errorf("gpu%d: %s peak %g, want %g", g, d, got, want)
			}
		}
	}
	for _, pair := range [][2]int{{0, 1}, {0, 71}, {35, 36}} {
		if p := m.PathBetween(pair[0], pair[1]); p.Kind != sim.PathNVLink {
			t.Errorf("gpu%d -> gpu%d: %v, want NVLink", pair[0], pair[1], p.Kind)
		}
	}
	rt, ok := m.Route(m.Hosts[35].Node, m.GPUs[71].Node)
	if !ok || len(rt.Hops) != 1 || math.Abs(m.Links[rt.Hops[0].Link].Bandwidth-450e9*0.875) > 1 {
		t.Errorf("grace35 -> gpu71: %+v, want one NVLink-C2C hop of 393.75 GB/s", rt)
	}
	if got := m.Hosts[0].APIOverhead; got != 3*sim.Microsecond {
		t.Errorf("api_overhead %v, want 3 us", got)
	}
}

// A second link between two ends is refused only where routes could never
// take it: one of another kind (an NVLink beside a PCIe link) or another
// p2p setting loads, one like the first is refused at its line.
func TestSecondLinkBetweenTheSameEnds(t *testing.T) {
	head := "name: t\nhosts: [{name: cpu0}]\ngpus: [{name: gpu0, model: H100-SXM, host: cpu0}, {name: gpu1, model: H100-SXM, host: cpu0}]\nlinks:\n  - {ends: [gpu0, cpu0], type: pcie5x16}\n  - {ends: [gpu1, cpu0], type: pcie5x16}\n  - {ends: [gpu0, gpu1], type: pcie5x16}\n"
	for _, c := range []struct {
		second, err string
	}{
		{"  - {ends: [gpu0, gpu1], type: nvlink4, count: 18}\n", ""},
		{"  - {ends: [gpu1, gpu0], type: pcie5x16, p2p: false}\n", ""},
		{"  - {ends: [gpu1, gpu0], type: pcie4x16}\n", "t.yaml:8:5: links[3]: a second pcie link between gpu1 and gpu0, like the one at t.yaml:7:5: "},
	} {
		_, err := Load("t.yaml", []byte(head+c.second))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.second, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: %v; want %q...", c.second, err, c.err)
		}
	}
}
