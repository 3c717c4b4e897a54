package discover

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"gpusim/sim"
	"gpusim/topologies"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// DGX H100 and H200 as a real one answers: GPUs at these PCI addresses,
// GPUs 0-3 on socket 0 and 4-7 on socket 1 (two 56-core Xeons with SMT),
// 18 NVLinks a GPU spread over four NVSwitches (5, 4, 4, 5), PCIe Gen5 x16.
var (
	dgxBusIDs    = []string{"00000000:1B:00.0", "00000000:43:00.0", "00000000:52:00.0", "00000000:61:00.0", "00000000:9D:00.0", "00000000:C3:00.0", "00000000:D1:00.0", "00000000:DF:00.0"}
	dgxSwitchBus = []string{"00000000:05:00.0", "00000000:06:00.0", "00000000:07:00.0", "00000000:08:00.0"}
	dgxSwitchOf  = []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3} // link -> switch
	dgxCPUs      = [][]int{{0, 55, 112, 167}, {56, 111, 168, 223}}             // socket -> CPU ranges
)

func pciInfo(bus string) nvml.PciInfo {
	var p nvml.PciInfo
	for i := 0; i < len(bus) && i < len(p.BusId)-1; i++ {
		p.BusId[i] = int8(bus[i])
	}
	return p
}

// bitmask sets bits in a go-nvml affinity set sized for n entries.
func bitmask(n int, set ...[2]int) []uint {
	words := make([]uint, (n-1)/8+1)
	for _, r := range set {
		for b := r[0]; b <= r[1]; b++ {
			words[b/64] |= 1 << (b % 64)
		}
	}
	return words
}

// likeDGX fills in what go-nvml's mock DGX leaves unset (NVLink, PCIe
// links, topology, P2P, affinities) and makes its UUIDs and PCI addresses
// fixed, so that the mock answers as the real machine does.
func likeDGX(s *server.Server) *server.Server {
	for _, nd := range s.Devices {
		d := nd.(*server.Device)
		i := d.Index
		socket := i / 4
		d.UUID = fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", i)
		d.PciBusID = dgxBusIDs[i]
		d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return pciInfo(dgxBusIDs[i]), nvml.SUCCESS }
		d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 5, nvml.SUCCESS }
		d.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
		d.GetMemoryAffinityFunc = func(n int, scope nvml.AffinityScope) ([]uint, nvml.Return) {
			return bitmask(n, [2]int{socket, socket}), nvml.SUCCESS
		}
		d.GetCpuAffinityFunc = func(n int) ([]uint, nvml.Return) {
			c := dgxCPUs[socket]
			return bitmask(n, [2]int{c[0], c[1]}, [2]int{c[2], c[3]}), nvml.SUCCESS
		}
		d.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
			if link >= 18 {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		d.GetNvLinkRemotePciInfoFunc = func(link int) (nvml.PciInfo, nvml.Return) {
			return pciInfo(dgxSwitchBus[dgxSwitchOf[link]]), nvml.SUCCESS
		}
		d.GetTopologyCommonAncestorFunc = func(other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			if other.(*server.Device).Index/4 == socket {
				return nvml.TOPOLOGY_NODE, nvml.SUCCESS
			}
			return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
		}
		d.GetP2PStatusFunc = func(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
			return nvml.P2P_STATUS_OK, nvml.SUCCESS
		}
	}
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what was discovered (go test -update rewrites it); got:\n%s", path, got)
	}
}

func mustDiscover(t *testing.T, lib nvml.Interface) *Machine {
	t.Helper()
	m, err := Discover(lib)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDiscoverDGX(t *testing.T) {
	for _, c := range []struct {
		name   string
		server func() *server.Server
		model  string
	}{
		{"dgxh100", dgxh100.New, "H100-SXM"},
		{"dgxh200", dgxh200.New, "H200-SXM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := mustDiscover(t, likeDGX(c.server()))
			if m.Driver != "550.54.15" || m.CUDA != "12.4" {
				t.Errorf("driver %q, CUDA %q; want 550.54.15 and 12.4", m.Driver, m.CUDA)
			}
			if len(m.Notes) != 0 {
				t.Errorf("notes on a machine NVML describes fully: %q", m.Notes)
			}
			for i, d := range m.Devices {
				if d.Model != c.model || d.PCIeGen != 5 || d.PCIeWidth != 16 || d.NUMANode != i/4 || d.NVSwitchLinks != 18 {
					t.Errorf("GPU%d: model %q, PCIe gen%d x%d, NUMA %d, %d NVSwitch links; want %s, gen5 x16, NUMA %d, 18",
						i, d.Model, d.PCIeGen, d.PCIeWidth, d.NUMANode, d.NVSwitchLinks, c.model, i/4)
				}
				if d.BusID != dgxBusIDs[i] {
					t.Errorf("GPU%d: bus %q, want %q", i, d.BusID, dgxBusIDs[i])
				}
				if want := []string{"0-55,112-167", "56-111,168-223"}[i/4]; d.CPUAffinity != want {
					t.Errorf("GPU%d: CPU affinity %q, want %q", i, d.CPUAffinity, want)
				}
				for j := range m.Devices {
					if j != i && d.NVLinks[j] != 18 {
						t.Errorf("GPU%d-GPU%d: %d NVLinks, want 18 (through the NVSwitches)", i, j, d.NVLinks[j])
					}
					if !m.P2P[i][j] {
						t.Errorf("GPU%d-GPU%d: no P2P", i, j)
					}
				}
			}
			text, err := m.Topology(c.name)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".yaml", text)
			tp, err := topologies.Load(c.name+".yaml", []byte(text))
			if err != nil {
				t.Fatalf("the discovered topology does not load: %v\n%s", err, text)
			}
			mc := tp.Machine
			if len(mc.GPUs) != 8 || len(mc.Hosts) != 2 {
				t.Fatalf("%d GPUs, %d hosts; want 8 and 2", len(mc.GPUs), len(mc.Hosts))
			}
			for i, g := range tp.GPUModels {
				if g.Name != c.model {
					t.Errorf("gpu%d is a %s, want %s", i, g.Name, c.model)
				}
				if want := i / 4; mc.GPUs[i].Host != want {
					t.Errorf("gpu%d on host %d, want %d", i, mc.GPUs[i].Host, want)
				}
			}
			nvswitches := 0
			for _, s := range mc.Switches {
				if s.Kind == "nvswitch" {
					nvswitches++
				}
			}
			if nvswitches != 1 {
				t.Errorf("%d NVSwitches, want 1:\n%s", nvswitches, text)
			}
			for b := 1; b < 8; b++ {
				if got := mc.PathBetween(0, b).Kind; got != sim.PathNVLink {
					t.Errorf("gpu0 -> gpu%d: path %v, want NVLink", b, got)
				}
			}
			for _, want := range []string{"# Discovered by gpusim topo discover", "Driver 550.54.15, CUDA 12.4", "GPU-00000000-0000-0000-0000-000000000007", "bus 00000000:DF:00.0", "PCIe gen5 x16"} {
				if !strings.Contains(text, want) {
					t.Errorf("the YAML's comments lack %q:\n%s", want, text)
				}
			}
		})
	}
}

// Discovery is deterministic: the same answers give the same bytes.
func TestDiscoverTwice(t *testing.T) {
	a, err := mustDiscover(t, likeDGX(dgxh100.New())).Topology("x")
	if err != nil {
		t.Fatal(err)
	}
	b, err := mustDiscover(t, likeDGX(dgxh100.New())).Topology("x")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two discoveries of one machine differ:\n%s\n----\n%s", a, b)
	}
}

// A DGX whose GPU3 has one of its 18 NVLinks down: NVML counts 17 links
// from GPU3 to the switches, the matrix gives GPU3's pairs the fewer, 17,
// and the topology joins GPU3 to the NVSwitch by 17 links and the others
// by 18 (it was refused: the counts were no longer all alike).
func TestDiscoverLinkDown(t *testing.T) {
	s := likeDGX(dgxh100.New())
	d3 := s.Devices[3].(*server.Device)
	d3.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
		switch {
		case link >= 18:
			return 0, nvml.ERROR_INVALID_ARGUMENT
		case link == 17:
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	m := mustDiscover(t, s)
	if got := m.Devices[3].NVSwitchLinks; got != 17 {
		t.Fatalf("GPU3: %d NVSwitch links, want 17", got)
	}
	text, err := m.Topology("x")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		k := 18
		if i == 3 {
			k = 17
		}
		if want := fmt.Sprintf("{ends: [gpu%d, nvswitch], type: nvlink4, count: %d}", i, k); !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// One GPU of the DGX: its NVLinks end at switches and no peer, so the
// matrix is 1x1 and the GPU hangs off its host by PCIe.
func TestDiscoverSingleGPU(t *testing.T) {
	s := likeDGX(dgxh100.New())
	s.Devices = s.Devices[:1]
	m := mustDiscover(t, s)
	if len(m.Devices) != 1 || len(m.Devices[0].NVLinks) != 0 || m.Level[0][0] != "X" {
		t.Fatalf("devices %d, NVLinks %v, level %v; want one GPU, no peers, X", len(m.Devices), m.Devices[0].NVLinks, m.Level)
	}
	text, err := m.Topology("one")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "single.yaml", text)
	tp, err := topologies.Load("one.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(tp.Machine.GPUs) != 1 || len(tp.Machine.Hosts) != 1 || tp.GPUModels[0].Name != "H100-SXM" {
		t.Errorf("%d GPUs (%s), %d hosts; want 1 H100-SXM, 1 host", len(tp.Machine.GPUs), tp.GPUModels[0].Name, len(tp.Machine.Hosts))
	}
}

func TestDiscoverErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(s *server.Server)
		want   string
	}{
		{"init", func(s *server.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
		}, "nvml: Init: ERROR_DRIVER_NOT_LOADED"},
		{"count", func(s *server.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, "nvml: DeviceGetCount: ERROR_UNKNOWN"},
		{"no GPUs", func(s *server.Server) { s.Devices = nil }, "nvml: DeviceGetCount: no GPUs"},
		{"name", func(s *server.Server) {
			s.Devices[2].(*server.Device).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		}, "nvml: GPU2: DeviceGetName: ERROR_GPU_IS_LOST"},
		{"topology", func(s *server.Server) {
			// Without NVLink the pairs' PCIe relation is asked.
			for _, d := range s.Devices {
				d.(*server.Device).GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
			}
			s.Devices[0].(*server.Device).GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
				return 0, nvml.ERROR_UNKNOWN
			}
		}, "nvml: GPU0: DeviceGetTopologyCommonAncestor(GPU1): ERROR_UNKNOWN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := likeDGX(dgxh100.New())
			shut := 0
			s.ShutdownFunc = func() nvml.Return { shut++; return nvml.SUCCESS }
			c.break_(s)
			m, err := Discover(s)
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v, %v; want error %q", m, err, c.want)
			}
			if wantShut := c.name != "init"; (shut == 1) != wantShut {
				t.Errorf("Shutdown called %d times; want it called once after a successful Init", shut)
			}
		})
	}
}

// What NVML cannot answer becomes a Note and a fallback, not an error.
func TestDiscoverUnsupported(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit func(s *server.Server)
		check func(t *testing.T, m *Machine)
		note  string
	}{
		{"NUMA not supported", func(s *server.Server) {
			for _, d := range s.Devices {
				d.(*server.Device).GetMemoryAffinityFunc = func(int, nvml.AffinityScope) ([]uint, nvml.Return) {
					return nil, nvml.ERROR_NOT_SUPPORTED
				}
			}
		}, func(t *testing.T, m *Machine) {
			if m.Devices[0].NUMANode != -1 {
				t.Errorf("NUMA node %d, want -1 (unknown)", m.Devices[0].NUMANode)
			}
		}, "nvml: DeviceGetMemoryAffinity: ERROR_NOT_SUPPORTED: NUMA node unknown (hosts follow the CPU affinity)"},
		{"NUMA function missing", func(s *server.Server) {
			s.LookupSymbolFunc = func(sym string) error {
				if sym == "nvmlDeviceGetMemoryAffinity" {
					return errors.New("undefined symbol")
				}
				return nil
			}
			for _, d := range s.Devices {
				d.(*server.Device).GetMemoryAffinityFunc = func(int, nvml.AffinityScope) ([]uint, nvml.Return) {
					panic("called a function the driver lacks")
				}
			}
		}, nil, "this driver's NVML has no nvmlDeviceGetMemoryAffinity (an older driver): NUMA node unknown (hosts follow the CPU affinity)"},
		{"NUMA and CPU affinity unknown", func(s *server.Server) {
			for _, d := range s.Devices {
				d.(*server.Device).GetMemoryAffinityFunc = func(int, nvml.AffinityScope) ([]uint, nvml.Return) {
					return nil, nvml.ERROR_FUNCTION_NOT_FOUND
				}
				d.(*server.Device).GetCpuAffinityFunc = func(int) ([]uint, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
			}
		}, func(t *testing.T, m *Machine) {
			tp := load(t, m)
			if len(tp.Machine.Hosts) != 1 {
				t.Errorf("%d hosts; want 1 when nothing tells the sockets apart", len(tp.Machine.Hosts))
			}
		}, "nvml: DeviceGetCpuAffinity: ERROR_NOT_SUPPORTED: CPU affinity unknown"},
		{"PCIe link unknown", func(s *server.Server) {
			for _, d := range s.Devices {
				d.(*server.Device).GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
			}
		}, func(t *testing.T, m *Machine) {
			text, err := m.Topology("x")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, "type: pcie5x16}") || !strings.Contains(text, "PCIe gen/width unknown has no gpusim link type: H100-SXM's pcie5x16 is used") {
				t.Errorf("want the preset's pcie5x16, noted:\n%s", text)
			}
		}, "nvml: DeviceGetMaxPcieLinkGeneration: ERROR_NOT_SUPPORTED: PCIe link type taken from the GPU preset"},
		{"CUDA version missing", func(s *server.Server) {
			s.LookupSymbolFunc = func(sym string) error {
				if sym == "nvmlSystemGetCudaDriverVersion" {
					return errors.New("undefined symbol")
				}
				return nil
			}
		}, func(t *testing.T, m *Machine) {
			if m.CUDA != "" {
				t.Errorf("CUDA %q, want unknown", m.CUDA)
			}
		}, "this driver's NVML has no nvmlSystemGetCudaDriverVersion (an older driver): CUDA version unknown"},
		{"NVLink far end by type only", func(s *server.Server) {
			for _, d := range s.Devices {
				d.(*server.Device).GetNvLinkRemotePciInfoFunc = func(int) (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.ERROR_NOT_SUPPORTED }
				d.(*server.Device).GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
					return nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS
				}
			}
		}, func(t *testing.T, m *Machine) {
			if len(m.Notes) != 0 || m.Level[0][7] != "NV18" {
				t.Errorf("notes %q, GPU0-GPU7 %s; want none and NV18", m.Notes, m.Level[0][7])
			}
		}, ""},
		{"P2P off", func(s *server.Server) {
			for _, d := range s.Devices {
				d.(*server.Device).GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
				d.(*server.Device).GetP2PStatusFunc = func(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
					return nvml.P2P_STATUS_NOT_SUPPORTED, nvml.SUCCESS
				}
			}
		}, func(t *testing.T, m *Machine) {
			if m.P2P[0][1] || !m.P2P[0][0] {
				t.Errorf("P2P %v: want false between GPUs, true on the diagonal", m.P2P)
			}
			if m.Level[0][1] != "NODE" || m.Level[0][4] != "SYS" {
				t.Errorf("levels %v: want NODE within a socket, SYS across", m.Level[0])
			}
			// No pair has P2P over PCIe: the topology forbids it, and
			// every copy between GPUs goes through a host.
			if !m.NoP2P {
				t.Error("NoP2P not set")
			}
			tp := load(t, m)
			if k := tp.Machine.PathBetween(0, 1).Kind; k != sim.PathStaged {
				t.Errorf("gpu0 to gpu1: %v, want host-staged", k)
			}
		}, "hosts and PCIe switches get p2p: false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := likeDGX(dgxh100.New())
			c.limit(s)
			m := mustDiscover(t, s)
			if !strings.Contains(strings.Join(m.Notes, "\n"), c.note) {
				t.Errorf("notes %q; want one containing %q", m.Notes, c.note)
			}
			if c.check != nil {
				c.check(t, m)
			}
			tp := load(t, m)
			if len(tp.Machine.GPUs) != 8 {
				t.Errorf("%d GPUs, want 8", len(tp.Machine.GPUs))
			}
		})
	}
}

func load(t *testing.T, m *Machine) *topologies.Topology {
	t.Helper()
	text, err := m.Topology("x")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topologies.Load("x.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return tp
}

// SMIText renders the matrix as nvidia-smi topo -m does, and
// FromNvidiaSMI reads back the NVLink and PCIe relations written by hand.
func TestSMITextRoundTrip(t *testing.T) {
	t.Run("dgxh100", func(t *testing.T) {
		m := mustDiscover(t, likeDGX(dgxh100.New()))
		got := m.SMIText()
		golden(t, "dgxh100.smi", got)
		// Every pair NV18; the PCIe relation (NODE, SYS) hides under NV#.
		for i, row := range m.Level {
			for j, c := range row {
				if want := map[bool]string{true: "X", false: "NV18"}[i == j]; c != want {
					t.Errorf("Level[%d][%d] = %s, want %s", i, j, c, want)
				}
			}
		}
	})
	// Four RTX 4090s: two pairs under a PCIe switch each, a pair per socket,
	// one pair P2P-less; and two A100s joined by NVLink (NV12) on one host.
	for _, c := range []struct {
		name string
		m    *Machine
		smi  string   // the matrix as nvidia-smi prints it, up to the legend
		want []string // lines of the YAML the builder must write
	}{
		{"4x4090", &Machine{
			Devices: []Device{
				{Name: "NVIDIA GeForce RTX 4090", Model: "RTX-4090", PCIeGen: 4, PCIeWidth: 16, NUMANode: 0, CPUAffinity: "0-31"},
				{Name: "NVIDIA GeForce RTX 4090", Model: "RTX-4090", PCIeGen: 4, PCIeWidth: 16, NUMANode: 0, CPUAffinity: "0-31"},
				{Name: "NVIDIA GeForce RTX 4090", Model: "RTX-4090", PCIeGen: 4, PCIeWidth: 16, NUMANode: 1, CPUAffinity: "32-63"},
				{Name: "NVIDIA GeForce RTX 4090", Model: "RTX-4090", PCIeGen: 4, PCIeWidth: 16, NUMANode: 1, CPUAffinity: "32-63"},
			},
			Level: [][]string{
				{"X", "PIX", "SYS", "SYS"},
				{"PIX", "X", "SYS", "SYS"},
				{"SYS", "SYS", "X", "PXB"},
				{"SYS", "SYS", "PXB", "X"},
			},
		}, "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n" +
			"GPU0\t X \tPIX\tSYS\tSYS\t0-31\t0\n" +
			"GPU1\tPIX\t X \tSYS\tSYS\t0-31\t0\n" +
			"GPU2\tSYS\tSYS\t X \tPXB\t32-63\t1\n" +
			"GPU3\tSYS\tSYS\tPXB\t X \t32-63\t1\n" +
			"\n" + smiLegend, []string{
			"  - {name: cpu0, cores: 32}",
			"  - {name: cpu1, cores: 32}",
			"  - {name: gpu2, model: RTX-4090, host: cpu1}",
			"  - {name: pcie0}",
			"  - {name: pcie1}",
			"  - {ends: [gpu0, pcie0], type: pcie4x16}",
			"  - {ends: [gpu1, pcie0], type: pcie4x16}",
			"  - {ends: [pcie0, cpu0], type: pcie4x16}",
			"  - {ends: [gpu3, pcie1], type: pcie4x16}",
			"  - {ends: [pcie1, cpu1], type: pcie4x16}",
			"  - {ends: [cpu0, cpu1], type: upi}",
		}},
		{"2xA100", &Machine{
			Devices: []Device{
				{Name: "NVIDIA A100-SXM4-80GB", Model: "A100-SXM4-80GB", PCIeGen: 4, PCIeWidth: 16, NUMANode: -1},
				{Name: "NVIDIA A100-SXM4-80GB", Model: "A100-SXM4-80GB", PCIeGen: 4, PCIeWidth: 16, NUMANode: -1},
			},
			Level: [][]string{{"X", "NV12"}, {"NV12", "X"}},
		}, "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n" +
			"GPU0\t X \tNV12\tN/A\tN/A\n" +
			"GPU1\tNV12\t X \tN/A\tN/A\n" +
			"\n" + smiLegend, []string{
			"  - {name: cpu0}",
			"  - {ends: [gpu0, gpu1], type: nvlink3, count: 12}",
			"  - {ends: [gpu0, cpu0], type: pcie4x16}",
			"  - {ends: [gpu1, cpu0], type: pcie4x16}",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.m.Devices {
				c.m.Devices[i].Index = i
			}
			text, err := c.m.Topology(c.name)
			if err != nil {
				t.Fatal(err)
			}
			lines := map[string]bool{}
			if c.smi != "" && c.m.SMIText() != c.smi {
				t.Errorf("SMIText:\n%s\nwant:\n%s", c.m.SMIText(), c.smi)
			}
			for _, l := range strings.Split(text, "\n") {
				lines[l] = true
			}
			for _, w := range c.want {
				if !lines[w] {
					t.Errorf("no line %q in:\n%s", w, text)
				}
			}
		})
	}
}

func TestTopologyErrors(t *testing.T) {
	mixed := mustDiscover(t, likeDGX(dgxh100.New()))
	mixed.Devices[5].Name, mixed.Devices[5].Model = "NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"
	unknown := mustDiscover(t, likeDGX(dgxh100.New()))
	for i := range unknown.Devices {
		unknown.Devices[i].Name, unknown.Devices[i].Model = "NVIDIA H800", ""
	}
	for _, c := range []struct {
		m    *Machine
		want string
	}{
		{mixed, `discover: GPU0 is "NVIDIA H100 80GB HBM3" (H100-SXM) but GPU5 is "NVIDIA A100-SXM4-80GB" (A100-SXM4-80GB): discovery supports one GPU model per machine`},
		{unknown, `discover: no gpusim GPU preset for "NVIDIA H800": set the model by hand, one of H100-SXM, H200-SXM, B200, A100-SXM4-80GB, V100-SXM2, L40S, RTX-4090`},
		{&Machine{}, "discover: no GPUs"},
	} {
		_, err := c.m.Topology("x")
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestPCIeLink(t *testing.T) {
	for _, c := range []struct {
		gen, width int
		want       string
	}{
		{3, 16, "pcie3x16"}, {4, 8, "pcie4x8"}, {5, 16, "pcie5x16"}, {5, 8, "pcie5x8"},
		{6, 16, ""}, {4, 4, ""}, {0, 16, ""}, {4, 0, ""},
	} {
		if got := PCIeLink(c.gen, c.width); got != c.want {
			t.Errorf("PCIeLink(%d, %d) = %q, want %q", c.gen, c.width, got, c.want)
		}
	}
}

func TestCPUList(t *testing.T) {
	for _, c := range []struct {
		set  [][2]int
		want string
	}{
		{nil, ""},
		{[][2]int{{0, 0}}, "0"},
		{[][2]int{{0, 55}, {112, 167}}, "0-55,112-167"},
		{[][2]int{{63, 64}, {70, 70}, {127, 127}}, "63-64,70,127"},
	} {
		if got := cpuList(bitmask(128, c.set...)); got != c.want {
			t.Errorf("cpuList(%v) = %q, want %q", c.set, got, c.want)
		}
	}
}

func TestNormBusID(t *testing.T) {
	for _, c := range [][2]string{
		{"0000:1B:00.0", "00000000:1b:00.0"},
		{"00000000:1b:00.0", "00000000:1b:00.0"},
		{"junk", "junk"},
	} {
		if got := normBusID(c[0]); got != c[1] {
			t.Errorf("normBusID(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

func BenchmarkDiscoverDGX(b *testing.B) {
	b.ReportAllocs()
	s := likeDGX(dgxh100.New())
	for b.Loop() {
		m, err := Discover(s)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Topology("x"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSelect: CUDA shown two of a DGX H100's eight GPUs, NVML's 5 and 2 in
// that order (CUDA_VISIBLE_DEVICES=5,2): the machine is those two, as gpu0
// and gpu1, with what NVML says of each and of the pair.
func TestSelect(t *testing.T) {
	m := mustDiscover(t, likeDGX(dgxh100.New()))
	s, err := m.Select([]string{"0000:c3:00.0", dgxBusIDs[2]}) // a short domain, lower case: the same address
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Devices) != 2 || s.Devices[0].Index != 5 || s.Devices[1].Index != 2 {
		t.Fatalf("devices %+v", s.Devices)
	}
	if s.Devices[0].NUMANode != 1 || s.Devices[1].NUMANode != 0 {
		t.Errorf("NUMA nodes %d, %d; want 1, 0 (GPU5 on the second socket)", s.Devices[0].NUMANode, s.Devices[1].NUMANode)
	}
	if s.Level[0][1] != m.Level[5][2] || s.Level[1][0] != m.Level[2][5] || s.Level[0][0] != "X" || !s.P2P[0][1] {
		t.Errorf("levels %v, P2P %v", s.Level, s.P2P)
	}
	if got := s.Devices[0].NVLinks; len(got) != 1 || got[1] != m.Devices[5].NVLinks[2] {
		t.Errorf("gpu0's NVLinks %v, want {1: %d}", got, m.Devices[5].NVLinks[2])
	}
	if len(m.Devices) != 8 || m.Devices[0].Index != 0 {
		t.Error("Select changed the machine it was called on")
	}
	y, err := s.Topology("visible")
	if err != nil {
		t.Fatal(err)
	}
	top, err := topologies.Load("visible.yaml", []byte(y))
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if n := len(top.Machine.GPUs); n != 2 {
		t.Errorf("%d GPUs in the topology, want 2", n)
	}
	for _, want := range []string{"# - GPU0 (NVML's GPU5): ", "# - GPU1 (NVML's GPU2): ", "CUDA is shown 2 of NVML's 8 GPUs, as gpu0..gpu1: NVML's GPU 5, 2"} {
		if !strings.Contains(y, want) {
			t.Errorf("the topology's comments lack %q", want)
		}
	}
	for _, bad := range [][]string{{"00000000:AA:00.0"}, {dgxBusIDs[1], dgxBusIDs[1]}} {
		if _, err := m.Select(bad); err == nil {
			t.Errorf("Select(%v) gave no error", bad)
		}
	}
	// All eight in NVML's order: nothing to note.
	if all, err := m.Select(dgxBusIDs); err != nil || len(all.Notes) != 0 || len(all.Devices) != 8 {
		t.Errorf("all eight: %v, notes %q", err, all.Notes)
	}
}
