package discover

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/models"
	"gpusim/topologies"
)

// Device is one GPU as NVML describes it.
type Device struct {
	// Index is the NVML device index (the order of nvidia-smi, not of
	// CUDA_VISIBLE_DEVICES).
	Index int
	// Name is NVML's product name ("NVIDIA H100 80GB HBM3"), UUID its
	// "GPU-..." identifier, BusID its PCI address ("00000000:18:00.0").
	Name, UUID, BusID string
	// MemoryBytes is the device memory NVML reports as total, bytes (a little
	// less than the datasheet's when the driver reserves some).
	MemoryBytes uint64
	// PCIeGen and PCIeWidth are the maximum PCIe generation and lane count of
	// the GPU's link (the maximum, not the current: the current one drops
	// while the GPU idles); 0 when NVML does not tell.
	PCIeGen, PCIeWidth int
	// NUMANode is the host NUMA node closest to the GPU's memory, the "NUMA
	// Affinity" of nvidia-smi topo -m; -1 when NVML does not tell.
	NUMANode int
	// CPUAffinity is the GPU's ideal CPUs as a list of ranges ("0-55,112-167"),
	// the "CPU Affinity" of nvidia-smi topo -m; "" when NVML does not tell.
	CPUAffinity string
	// NVLinks maps a peer GPU's index to the active NVLinks between the two:
	// direct links plus, when both reach NVSwitches, the smaller of their
	// switch link counts (what nvidia-smi shows as NV#). Peers without NVLink
	// are absent; nil when the GPU has none.
	NVLinks map[int]int
	// NVSwitchLinks is the number of active NVLinks whose far end is not a
	// GPU (an NVSwitch); 0 when none.
	NVSwitchLinks int
	// Model is the gpusim GPU preset ("H100-SXM") the name maps to, or ""
	// when none fits. Set it by hand before calling Machine.Topology to
	// override the mapping.
	Model string
}

// Machine is what NVML tells about the GPUs of this machine.
type Machine struct {
	// Driver is the driver version ("550.54.15"); CUDA the highest CUDA
	// version it supports ("12.4"), "" when NVML does not tell.
	Driver, CUDA string
	// Devices are the GPUs in NVML index order.
	Devices []Device
	// Level[i][j] is how GPU i reaches GPU j, in nvidia-smi topo -m's words:
	// "X" on the diagonal, "NV#" for # NVLinks, else the PCIe path: "PIX"
	// (one PCIe switch), "PXB" (several), "PHB" (a host bridge), "NODE"
	// (host bridges in one NUMA node) or "SYS" (across sockets).
	Level [][]string
	// P2P[i][j] says whether GPU i can read GPU j's memory peer-to-peer
	// (NVML's P2P read capability); true on the diagonal.
	P2P [][]bool
	// NoP2P says no pair of GPUs joined by PCIe alone has P2P: the
	// topology then forbids P2P over PCIe.
	NoP2P bool
	// Notes say what NVML did not tell and what was assumed instead, in the
	// order met.
	Notes []string
}

// Error is an NVML call that failed: Call names it ("Init", "GPU2:
// DeviceGetName"), Code is what NVML returned. Callers decide by Code, not
// by the text: once the library is loaded, go-nvml words it as NVML's
// nvmlErrorString does ("Driver Not Loaded"), not as the constant's name.
type Error struct {
	Call string
	Code nvml.Return
}

func (e *Error) Error() string { return "nvml: " + e.Call + ": " + e.Code.Error() }

// ErrNotShown is Select's error where the GPUs asked for are not NVML's.
var ErrNotShown = errors.New("discover: the GPUs CUDA shows are not those NVML sees")

// ErrNoGPU is Discover's error where NVML works but reports no GPU.
var ErrNoGPU = errors.New("nvml: DeviceGetCount: no GPUs")

// Discover asks NVML about every GPU of the machine: it initializes lib,
// queries, and shuts lib down. Functions that NVML answers with
// ERROR_NOT_SUPPORTED, or that an old driver lacks, leave a Note and a
// fallback value rather than an error. It makes O(n²) NVML calls for n GPUs
// (the pairwise topology and P2P queries) plus NVLINK_MAX_LINKS per GPU.
func Discover(lib nvml.Interface) (m *Machine, err error) {
	if r := lib.Init(); r != nvml.SUCCESS {
		return nil, &Error{Call: "Init", Code: r}
	}
	defer func() {
		r := lib.Shutdown()
		if r == nvml.SUCCESS {
			return
		}
		if err != nil {
			err = fmt.Errorf("%w (and nvml: Shutdown: %s)", err, r.Error())
		} else {
			m.Notes = append(m.Notes, fmt.Sprintf("nvml: Shutdown: %s", r.Error()))
		}
	}()
	d := &discoverer{lib: lib, m: &Machine{}, syms: map[string]bool{}}
	if err := d.run(); err != nil {
		return nil, err
	}
	return d.m, nil
}

type discoverer struct {
	lib     nvml.Interface
	m       *Machine
	handles []nvml.Device
	syms    map[string]bool // looked-up symbols: present or not
	noted   map[string]bool // one-off notes already made
}

// unsupported says whether r means the question has no answer here: the
// GPU or platform does not support it, or the driver lacks the function.
func unsupported(r nvml.Return) bool {
	return r == nvml.ERROR_NOT_SUPPORTED || r == nvml.ERROR_FUNCTION_NOT_FOUND
}

// has says whether the loaded NVML library exports sym. Calling a function
// the library lacks would end the process (go-nvml binds symbols lazily), so
// functions newer than the oldest drivers are looked up first.
func (d *discoverer) has(sym string) bool {
	if ok, seen := d.syms[sym]; seen {
		return ok
	}
	ok := true
	if ext := d.lib.Extensions(); ext != nil {
		ok = ext.LookupSymbol(sym) == nil
	}
	d.syms[sym] = ok
	if !ok {
		d.note(sym, fmt.Sprintf("this driver's NVML has no %s (an older driver): %s", sym, consequence[sym]))
	}
	return ok
}

// consequence says what is assumed when a function is missing or
// unsupported.
var consequence = map[string]string{
	"nvmlSystemGetCudaDriverVersion":      "CUDA version unknown",
	"nvmlDeviceGetMaxPcieLinkGeneration":  "PCIe link type taken from the GPU preset",
	"nvmlDeviceGetTopologyCommonAncestor": "GPUs without NVLink between them are taken as SYS (each on its own PCIe link to its host)",
	"nvmlDeviceGetP2PStatus":              "P2P taken as unsupported",
	"nvmlDeviceGetNvLinkState":            "no NVLink assumed",
	"nvmlDeviceGetNvLinkRemotePciInfo":    "links whose far end is unknown are not counted",
	"nvmlDeviceGetNvLinkRemoteDeviceType": "links whose far end is unknown are not counted",
	"nvmlDeviceGetMemoryAffinity":         "NUMA node unknown (hosts follow the CPU affinity)",
	"nvmlDeviceGetCpuAffinity":            "CPU affinity unknown",
}

// note records a Note once per key.
func (d *discoverer) note(key, text string) {
	if d.noted == nil {
		d.noted = map[string]bool{}
	}
	if d.noted[key] {
		return
	}
	d.noted[key] = true
	d.m.Notes = append(d.m.Notes, text)
}

// unsupportedNote records that fn returned r (not supported), once per fn.
func (d *discoverer) unsupportedNote(fn, nvmlSym string, r nvml.Return) {
	d.note(nvmlSym+"/"+r.Error(), fmt.Sprintf("nvml: %s: %s: %s", fn, r.Error(), consequence[nvmlSym]))
}

func (d *discoverer) run() error {
	m := d.m
	drv, r := d.lib.SystemGetDriverVersion()
	if r != nvml.SUCCESS {
		return &Error{Call: "SystemGetDriverVersion", Code: r}
	}
	m.Driver = drv
	if d.has("nvmlSystemGetCudaDriverVersion") {
		v, r := d.lib.SystemGetCudaDriverVersion()
		switch {
		case r == nvml.SUCCESS:
			m.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
		case unsupported(r):
			d.unsupportedNote("SystemGetCudaDriverVersion", "nvmlSystemGetCudaDriverVersion", r)
		default:
			return &Error{Call: "SystemGetCudaDriverVersion", Code: r}
		}
	}
	n, r := d.lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return &Error{Call: "DeviceGetCount", Code: r}
	}
	if n == 0 {
		return ErrNoGPU
	}
	for i := 0; i < n; i++ {
		h, r := d.lib.DeviceGetHandleByIndex(i)
		if r != nvml.SUCCESS {
			return &Error{Call: fmt.Sprintf("DeviceGetHandleByIndex(%d)", i), Code: r}
		}
		d.handles = append(d.handles, h)
		dev, err := d.device(i, h)
		if err != nil {
			return err
		}
		m.Devices = append(m.Devices, dev)
	}
	if err := d.nvlinks(); err != nil {
		return err
	}
	if err := d.pairs(); err != nil {
		return err
	}
	return nil
}

// device reads what one GPU says about itself.
func (d *discoverer) device(i int, h nvml.Device) (Device, error) {
	dev := Device{Index: i, NUMANode: -1}
	fail := func(fn string, r nvml.Return) (Device, error) {
		return Device{}, &Error{Call: fmt.Sprintf("GPU%d: %s", i, fn), Code: r}
	}
	var r nvml.Return
	if dev.Name, r = h.GetName(); r != nvml.SUCCESS {
		return fail("DeviceGetName", r)
	}
	if dev.UUID, r = h.GetUUID(); r != nvml.SUCCESS {
		return fail("DeviceGetUUID", r)
	}
	pci, r := h.GetPciInfo()
	if r != nvml.SUCCESS {
		return fail("DeviceGetPciInfo", r)
	}
	dev.BusID = busID(pci)
	mem, r := h.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return fail("DeviceGetMemoryInfo", r)
	}
	dev.MemoryBytes = mem.Total
	if d.has("nvmlDeviceGetMaxPcieLinkGeneration") {
		gen, r := h.GetMaxPcieLinkGeneration()
		switch {
		case r == nvml.SUCCESS:
			dev.PCIeGen = gen
		case unsupported(r):
			d.unsupportedNote("DeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration", r)
		default:
			return fail("DeviceGetMaxPcieLinkGeneration", r)
		}
		width, r := h.GetMaxPcieLinkWidth()
		switch {
		case r == nvml.SUCCESS:
			dev.PCIeWidth = width
		case unsupported(r):
			d.unsupportedNote("DeviceGetMaxPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkGeneration", r)
		default:
			return fail("DeviceGetMaxPcieLinkWidth", r)
		}
	}
	if d.has("nvmlDeviceGetMemoryAffinity") {
		// 64 words of 64 bits: up to 4096 NUMA nodes (go-nvml sizes the set
		// as if each word held 8).
		nodes, r := h.GetMemoryAffinity(512, nvml.AFFINITY_SCOPE_NODE)
		switch {
		case r == nvml.SUCCESS:
			if k := firstBit(nodes); k >= 0 {
				dev.NUMANode = k
			} else {
				d.note("numa-empty", fmt.Sprintf("nvml: DeviceGetMemoryAffinity gave GPU%d no NUMA node: %s", i, consequence["nvmlDeviceGetMemoryAffinity"]))
			}
		case unsupported(r):
			d.unsupportedNote("DeviceGetMemoryAffinity", "nvmlDeviceGetMemoryAffinity", r)
		default:
			return fail("DeviceGetMemoryAffinity", r)
		}
	}
	if d.has("nvmlDeviceGetCpuAffinity") {
		cpus, r := h.GetCpuAffinity(8192) // 8192 CPUs, rounded up by go-nvml
		switch {
		case r == nvml.SUCCESS:
			dev.CPUAffinity = cpuList(cpus)
		case unsupported(r):
			d.unsupportedNote("DeviceGetCpuAffinity", "nvmlDeviceGetCpuAffinity", r)
		default:
			return fail("DeviceGetCpuAffinity", r)
		}
	}
	model, note := models.GPUPresetFor(dev.Name)
	dev.Model = model
	if note != "" {
		d.note("model/"+dev.Name, note)
	}
	if g, ok := models.LookupGPU(model); ok && g.MemoryBytes > 0 {
		ratio := float64(dev.MemoryBytes) / float64(g.MemoryBytes)
		if ratio < 0.85 || ratio > 1.15 {
			d.note("memory/"+dev.Name, fmt.Sprintf("%s has %d MiB of memory, the %s preset %d MB: the preset's is used", dev.Name, dev.MemoryBytes>>20, model, g.MemoryBytes/1e6))
		}
	}
	return dev, nil
}

// nvlinks counts each GPU's active NVLinks by far end: another GPU, or an
// NVSwitch (anything that is not a GPU).
func (d *discoverer) nvlinks() error {
	m := d.m
	n := len(m.Devices)
	byBus := map[string]int{}
	for i, dev := range m.Devices {
		byBus[normBusID(dev.BusID)] = i
	}
	if !d.has("nvmlDeviceGetNvLinkState") || !d.has("nvmlDeviceGetNvLinkRemotePciInfo") {
		return nil
	}
	direct := make([][]int, n)
	for i, h := range d.handles {
		direct[i] = make([]int, n)
		for link := 0; link < nvml.NVLINK_MAX_LINKS; link++ {
			st, r := h.GetNvLinkState(link)
			if r == nvml.ERROR_NOT_SUPPORTED || r == nvml.ERROR_INVALID_ARGUMENT {
				continue // no NVLink, or no such link on this GPU
			}
			if r != nvml.SUCCESS {
				return &Error{Call: fmt.Sprintf("GPU%d: DeviceGetNvLinkState(%d)", i, link), Code: r}
			}
			if st != nvml.FEATURE_ENABLED {
				continue
			}
			pci, r := h.GetNvLinkRemotePciInfo(link)
			if unsupported(r) {
				// Without the far end's address, its type still tells a
				// switch.
				if d.has("nvmlDeviceGetNvLinkRemoteDeviceType") {
					typ, r2 := h.GetNvLinkRemoteDeviceType(link)
					if r2 == nvml.SUCCESS && typ == nvml.NVLINK_DEVICE_TYPE_SWITCH {
						m.Devices[i].NVSwitchLinks++
						continue
					}
				}
				d.unsupportedNote("DeviceGetNvLinkRemotePciInfo", "nvmlDeviceGetNvLinkRemotePciInfo", r)
				continue
			}
			if r != nvml.SUCCESS {
				return &Error{Call: fmt.Sprintf("GPU%d: DeviceGetNvLinkRemotePciInfo(%d)", i, link), Code: r}
			}
			if j, ok := byBus[normBusID(busID(pci))]; ok {
				if j != i {
					direct[i][j]++
				}
				continue
			}
			m.Devices[i].NVSwitchLinks++
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			k := min(direct[i][j], direct[j][i])
			if direct[i][j] != direct[j][i] && i < j {
				d.note(fmt.Sprintf("asym%d-%d", i, j), fmt.Sprintf("GPU%d counts %d NVLinks to GPU%d, GPU%d counts %d: the smaller is used", i, direct[i][j], j, j, direct[j][i]))
			}
			if si, sj := m.Devices[i].NVSwitchLinks, m.Devices[j].NVSwitchLinks; si > 0 && sj > 0 {
				k += min(si, sj)
			}
			if k > 0 {
				if m.Devices[i].NVLinks == nil {
					m.Devices[i].NVLinks = map[int]int{}
				}
				m.Devices[i].NVLinks[j] = k
			}
		}
	}
	var counts []int
	for _, dev := range m.Devices {
		if dev.NVSwitchLinks > 0 {
			counts = append(counts, dev.NVSwitchLinks)
		}
	}
	if len(counts) > 0 && len(counts) < n {
		d.note("nvswitch-some", fmt.Sprintf("%d of %d GPUs have NVLinks to an NVSwitch; the others reach their peers over PCIe only", len(counts), n))
	}
	return nil
}

// pairs fills Level and P2P.
func (d *discoverer) pairs() error {
	m := d.m
	n := len(m.Devices)
	m.Level = make([][]string, n)
	m.P2P = make([][]bool, n)
	for i := range m.Level {
		m.Level[i] = make([]string, n)
		m.P2P[i] = make([]bool, n)
	}
	hasTopo := d.has("nvmlDeviceGetTopologyCommonAncestor")
	hasP2P := d.has("nvmlDeviceGetP2PStatus")
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				m.Level[i][j], m.P2P[i][j] = "X", true
				continue
			}
			if hasP2P {
				st, r := d.handles[i].GetP2PStatus(d.handles[j], nvml.P2P_CAPS_INDEX_READ)
				switch {
				case r == nvml.SUCCESS:
					m.P2P[i][j] = st == nvml.P2P_STATUS_OK
				case unsupported(r):
					d.unsupportedNote("DeviceGetP2PStatus", "nvmlDeviceGetP2PStatus", r)
				default:
					return &Error{Call: fmt.Sprintf("GPU%d: DeviceGetP2PStatus(GPU%d, P2P_CAPS_INDEX_READ)", i, j), Code: r}
				}
			}
			if k := m.Devices[i].NVLinks[j]; k > 0 {
				m.Level[i][j] = fmt.Sprintf("NV%d", k)
				continue
			}
			if j < i {
				m.Level[i][j] = m.Level[j][i] // NVML's answer is symmetric; ask once
				continue
			}
			m.Level[i][j] = "SYS"
			if !hasTopo {
				continue
			}
			lvl, r := d.handles[i].GetTopologyCommonAncestor(d.handles[j])
			switch {
			case r == nvml.SUCCESS:
				s, ok := levelName(lvl)
				if !ok {
					d.note(fmt.Sprintf("level%d", lvl), fmt.Sprintf("nvml: DeviceGetTopologyCommonAncestor gave level %d, which gpusim does not know: taken as SYS", lvl))
				}
				m.Level[i][j] = s
			case unsupported(r):
				d.unsupportedNote("DeviceGetTopologyCommonAncestor", "nvmlDeviceGetTopologyCommonAncestor", r)
			default:
				return &Error{Call: fmt.Sprintf("GPU%d: DeviceGetTopologyCommonAncestor(GPU%d)", i, j), Code: r}
			}
		}
	}
	var noP2P []string
	pcie, pcieNoP2P := 0, 0 // pairs joined by PCIe only, and those of them without P2P
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			no := !m.P2P[i][j] || !m.P2P[j][i]
			if no {
				noP2P = append(noP2P, fmt.Sprintf("GPU%d-GPU%d", i, j))
			}
			if !strings.HasPrefix(m.Level[i][j], "NV") {
				pcie++
				if no {
					pcieNoP2P++
				}
			}
		}
	}
	m.NoP2P = hasP2P && pcie > 0 && pcieNoP2P == pcie
	switch {
	case m.NoP2P:
		d.note("nop2p", fmt.Sprintf("no P2P read between %s (NVML): hosts and PCIe switches get p2p: false", strings.Join(noP2P, ", ")))
	case len(noP2P) > 0 && hasP2P:
		d.note("nop2p", fmt.Sprintf("no P2P read between %s (NVML), but other pairs over PCIe have it: the topology below still lets them copy peer-to-peer; set p2p: false on the hosts and switches they cross", strings.Join(noP2P, ", ")))
	}
	return nil
}

// levelName is nvidia-smi's word for an NVML topology level.
func levelName(l nvml.GpuTopologyLevel) (string, bool) {
	switch l {
	case nvml.TOPOLOGY_INTERNAL, nvml.TOPOLOGY_SINGLE:
		return "PIX", true // INTERNAL: two GPUs on one board, behind its bridge
	case nvml.TOPOLOGY_MULTIPLE:
		return "PXB", true
	case nvml.TOPOLOGY_HOSTBRIDGE:
		return "PHB", true
	case nvml.TOPOLOGY_NODE:
		return "NODE", true
	case nvml.TOPOLOGY_SYSTEM:
		return "SYS", true
	}
	return "SYS", false
}

// busID is the PCI address NVML gives, "" if none.
func busID(p nvml.PciInfo) string {
	var b []byte
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	if len(b) == 0 && (p.Bus != 0 || p.Device != 0 || p.Domain != 0) {
		return fmt.Sprintf("%08x:%02x:%02x.0", p.Domain, p.Bus, p.Device)
	}
	return string(b)
}

// Select returns the machine as a program sees it when CUDA is shown only
// some GPUs, or shows them in another order (CUDA_VISIBLE_DEVICES, a job
// scheduler's share of a node): the GPUs with the given PCI addresses, in
// that order, with their levels, P2P and NVLinks among themselves. A GPU's
// Index stays NVML's. An address NVML does not know, or one given twice, is
// an error.
func (m *Machine) Select(busIDs []string) (*Machine, error) {
	byBus := map[string]int{}
	for i, d := range m.Devices {
		byBus[normBusID(d.BusID)] = i
	}
	pick := make([]int, len(busIDs))
	seen := map[int]bool{}
	for k, id := range busIDs {
		i, ok := byBus[normBusID(id)]
		if !ok {
			return nil, fmt.Errorf("%w: no GPU at PCI address %s among NVML's %d", ErrNotShown, id, len(m.Devices))
		}
		if seen[i] {
			return nil, fmt.Errorf("%w: PCI address %s given twice", ErrNotShown, id)
		}
		seen[i], pick[k] = true, i
	}
	out := &Machine{Driver: m.Driver, CUDA: m.CUDA, NoP2P: m.NoP2P, Notes: append([]string(nil), m.Notes...)}
	pos := map[int]int{} // old position -> new
	for k, i := range pick {
		pos[i] = k
	}
	for _, i := range pick {
		d := m.Devices[i]
		var links map[int]int
		for peer, n := range d.NVLinks {
			if k, ok := pos[peer]; ok {
				if links == nil {
					links = map[int]int{}
				}
				links[k] = n
			}
		}
		d.NVLinks = links
		out.Devices = append(out.Devices, d)
	}
	out.Level = make([][]string, len(pick))
	out.P2P = make([][]bool, len(pick))
	for a, i := range pick {
		out.Level[a] = make([]string, len(pick))
		out.P2P[a] = make([]bool, len(pick))
		for b, j := range pick {
			out.Level[a][b] = m.Level[i][j]
			out.P2P[a][b] = m.P2P[i][j]
		}
	}
	if len(pick) != len(m.Devices) || !sort.IntsAreSorted(pick) {
		idx := make([]string, len(pick))
		for k, i := range pick {
			idx[k] = strconv.Itoa(m.Devices[i].Index)
		}
		out.Notes = append(out.Notes, fmt.Sprintf("CUDA is shown %d of NVML's %d GPUs, as gpu0..gpu%d: NVML's GPU %s", len(pick), len(m.Devices), len(pick)-1, strings.Join(idx, ", ")))
	}
	return out, nil
}

// normBusID makes "0000:18:00.0" and "00000000:18:00.0" compare equal.
func normBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || strings.Count(rest, ":") != 1 {
		return s
	}
	v, err := strconv.ParseUint(dom, 16, 32)
	if err != nil {
		return s
	}
	return fmt.Sprintf("%08x:%s", v, rest)
}

// firstBit is the lowest set bit of a bitmask of words, or -1.
func firstBit(words []uint) int {
	for w, x := range words {
		if x != 0 {
			return w*bits.UintSize + bits.TrailingZeros(x)
		}
	}
	return -1
}

// cpuList writes a bitmask of CPUs as ranges: "0-55,112-167".
func cpuList(words []uint) string {
	var parts []string
	start := -1
	total := len(words) * bits.UintSize
	for c := 0; c <= total; c++ {
		set := c < total && words[c/bits.UintSize]&(1<<(c%bits.UintSize)) != 0
		switch {
		case set && start < 0:
			start = c
		case !set && start >= 0:
			if c-1 == start {
				parts = append(parts, strconv.Itoa(start))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", start, c-1))
			}
			start = -1
		}
	}
	return strings.Join(parts, ",")
}

// PCIeLink is the gpusim link type of a PCIe link of that generation and
// width ("pcie5x16"), or "" when there is no such preset (models.LinkNames).
func PCIeLink(gen, width int) string {
	if gen <= 0 || width <= 0 {
		return ""
	}
	name := fmt.Sprintf("pcie%dx%d", gen, width)
	if _, ok := models.LookupLink(name); !ok {
		return ""
	}
	return name
}

// smiLegend is the legend nvidia-smi topo -m prints under its table.
const smiLegend = `Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
`

// SMIText renders the GPU matrix as nvidia-smi topo -m prints it (without
// NIC columns), with a CPU Affinity and a NUMA Affinity column ("N/A" where
// unknown) and the legend; topologies.FromNvidiaSMI reads it.
func (m *Machine) SMIText() string {
	var b strings.Builder
	for i := range m.Devices {
		fmt.Fprintf(&b, "\tGPU%d", i)
	}
	b.WriteString("\tCPU Affinity\tNUMA Affinity\n")
	for i, dev := range m.Devices {
		fmt.Fprintf(&b, "GPU%d", i)
		for j := range m.Devices {
			c := m.Level[i][j]
			if c == "X" {
				c = " X "
			}
			b.WriteString("\t" + c)
		}
		cpus, numa := dev.CPUAffinity, "N/A"
		if cpus == "" {
			cpus = "N/A"
		}
		if dev.NUMANode >= 0 {
			numa = strconv.Itoa(dev.NUMANode)
		}
		fmt.Fprintf(&b, "\t%s\t%s\n", cpus, numa)
	}
	b.WriteString("\n" + smiLegend)
	return b.String()
}

// Topology builds the machine's topology with topologies.FromNvidiaSMI (the
// builder behind gpusim topo import) from SMIText, the GPU preset and the
// PCIe link type, and returns its YAML headed by comments saying where each
// fact came from. name is the topology's name ("" for "discovered"). It
// fails when a GPU has no preset (set Devices[i].Model) or the GPUs are of
// different models.
func (m *Machine) Topology(name string) (string, error) {
	if len(m.Devices) == 0 {
		return "", fmt.Errorf("discover: no GPUs")
	}
	if name == "" {
		name = "discovered"
	}
	first := m.Devices[0]
	for _, dev := range m.Devices[1:] {
		if dev.Model != first.Model || (dev.Model == "" && dev.Name != first.Name) {
			return "", fmt.Errorf("discover: GPU0 is %q (%s) but GPU%d is %q (%s): discovery supports one GPU model per machine", first.Name, presetOrNone(first.Model), dev.Index, dev.Name, presetOrNone(dev.Model))
		}
	}
	model := first.Model
	if model == "" {
		return "", fmt.Errorf("discover: no gpusim GPU preset for %q: set the model by hand, one of %s", first.Name, strings.Join(models.GPUNames(), ", "))
	}
	g, ok := models.LookupGPU(model)
	if !ok {
		return "", fmt.Errorf("discover: unknown GPU model %q; models: %s", model, strings.Join(models.GPUNames(), ", "))
	}
	notes := append([]string(nil), m.Notes...)
	// The PCIe link type: the most common among the GPUs (first on ties).
	count := map[string]int{}
	var order []string
	for _, dev := range m.Devices {
		l := PCIeLink(dev.PCIeGen, dev.PCIeWidth)
		if count[l] == 0 {
			order = append(order, l)
		}
		count[l]++
	}
	pcie := order[0]
	for _, l := range order[1:] {
		if count[l] > count[pcie] {
			pcie = l
		}
	}
	for _, dev := range m.Devices {
		if l := PCIeLink(dev.PCIeGen, dev.PCIeWidth); l != pcie {
			notes = append(notes, fmt.Sprintf("GPU%d's PCIe link is %s, unlike most GPUs': all are given %s", dev.Index, pcieDesc(dev), orPreset(pcie, g.PCIe)))
		}
	}
	if pcie == "" {
		notes = append(notes, fmt.Sprintf("PCIe %s has no gpusim link type: %s's %s is used", pcieDesc(first), model, g.PCIe))
	}
	smi := m.SMIText()
	text, _, err := topologies.FromNvidiaSMI("nvml", []byte(smi), topologies.SMIOptions{GPU: model, PCIe: pcie, Name: name, NoP2P: m.NoP2P})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# Discovered by gpusim topo discover, through NVML.\n")
	cuda := m.CUDA
	if cuda == "" {
		cuda = "unknown"
	}
	fmt.Fprintf(&b, "# Driver %s, CUDA %s.\n", m.Driver, cuda)
	b.WriteString("# GPUs:\n")
	for k, dev := range m.Devices {
		numa := "NUMA node unknown"
		if dev.NUMANode >= 0 {
			numa = fmt.Sprintf("NUMA node %d", dev.NUMANode)
		}
		cpus := dev.CPUAffinity
		if cpus == "" {
			cpus = "unknown"
		}
		if dev.Index == k {
			fmt.Fprintf(&b, "# - GPU%d: ", k)
		} else {
			fmt.Fprintf(&b, "# - GPU%d (NVML's GPU%d): ", k, dev.Index)
		}
		fmt.Fprintf(&b, "%s, %s, bus %s, %d MiB, PCIe %s, %s, CPUs %s", dev.Name, dev.UUID, dev.BusID, dev.MemoryBytes>>20, pcieDesc(dev), numa, cpus)
		if dev.NVSwitchLinks > 0 {
			fmt.Fprintf(&b, ", %d NVLinks to NVSwitches", dev.NVSwitchLinks)
		}
		b.WriteString(".\n")
	}
	if len(notes) > 0 {
		b.WriteString("# Notes:\n")
		for _, n := range notes {
			b.WriteString("# - " + n + "\n")
		}
	}
	b.WriteString("# NVML's view in the layout of nvidia-smi topo -m, which the importer below read:\n")
	for _, l := range strings.Split(strings.TrimRight(smi, "\n"), "\n") {
		if l == "" {
			b.WriteString("#\n")
			continue
		}
		b.WriteString("#   " + l + "\n")
	}
	b.WriteString("#\n")
	b.WriteString(text)
	return b.String(), nil
}

func presetOrNone(p string) string {
	if p == "" {
		return "no preset"
	}
	return p
}

func orPreset(l, preset string) string {
	if l == "" {
		return preset + " (the model's)"
	}
	return l
}

func pcieDesc(d Device) string {
	if d.PCIeGen <= 0 || d.PCIeWidth <= 0 {
		return "gen/width unknown"
	}
	return fmt.Sprintf("gen%d x%d", d.PCIeGen, d.PCIeWidth)
}
