package topologies

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"gpusim/models"
)

// SMIOptions say what `nvidia-smi topo -m` does not: the GPU model, the
// PCIe link type, and the topology's name.
type SMIOptions struct {
	// GPU is the GPU preset ("H100-SXM"); empty infers it from the NVLink
	// counts where they tell (NV18: H100-SXM, though H200 and B200 show it
	// too; NV12, fewer where a link is down, between every pair of 4 or
	// more GPUs: A100-SXM4-80GB; NV1 and NV2 among 4 or more, each to 3 or more peers: V100-SXM2), and is
	// an error elsewhere (no NVLink, or bridged PCIe cards).
	GPU string
	// PCIe is the GPUs' PCIe link type ("pcie4x16"); empty takes the GPU
	// preset's.
	PCIe string
	// Name of the topology; empty: "imported".
	Name string
	// NoP2P says no two GPUs can copy peer to peer over PCIe (consumer
	// GPUs, or a platform that does not forward it): the hosts and PCIe
	// switches get p2p: false. NVLink pairs still copy peer to peer.
	NoP2P bool
}

// smiMatrix is the parsed table of `nvidia-smi topo -m`.
type smiMatrix struct {
	cols []string   // device column names: GPU0.., NIC0.., mlx5_0..
	rows []smiRow   // the GPU rows in order; NIC rows repeat the GPU rows' NIC columns
	rel  [][]string // rel[i][j]: GPU i to column j ("X", "NV12", "SYS", ...)
}

type smiRow struct {
	name     string
	line     int
	cells    []string
	cpus     string // CPU Affinity, "" if absent
	cores    int    // the distinct CPUs cpus lists; 0 if absent or not a list
	numa     string // NUMA Affinity, "" if absent or N/A
	cellCols []int  // the column of each cell in the line, 1-based
}

var smiRelations = "X, NV# (NVLink, # links), SYS, NODE, PHB, PXB, PIX"

// FromNvidiaSMI turns the text of `nvidia-smi topo -m` into a topology: its
// YAML (with comments saying what was inferred) and the loaded topology.
// NVLink counts give direct links, or an NVSwitch when every pair shows
// NVLink and no GPU has that many ports for all its peers (a GPU with a
// link down shows fewer, and gets fewer links to it: see nvFabric); PIX and PXB
// (between GPUs, or to a NIC both reach by PIX) put GPUs under a shared PCIe
// switch; CPU or NUMA affinity gives the hosts. Errors name file:line:col.
func FromNvidiaSMI(file string, data []byte, opt SMIOptions) (string, *Topology, error) {
	mx, err := parseSMI(file, string(data))
	if err != nil {
		return "", nil, err
	}
	n := len(mx.rows)
	// The GPU model.
	maxNV, allNV := 0, true
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			k := nvCount(mx.rel[i][j])
			maxNV = max(maxNV, k)
			if k == 0 {
				allNV = false
			}
		}
	}
	// The fewest NVLink peers of a GPU: bridged cards have one, a cube
	// mesh's GPUs 3 or 4.
	minPeers := n
	for i := 0; i < n; i++ {
		peers := 0
		for j := 0; j < n; j++ {
			if i != j && nvCount(mx.rel[i][j]) > 0 {
				peers++
			}
		}
		minPeers = min(minPeers, peers)
	}
	// Counts that differ between two GPUs are a GPU with a link down
	// only where they may meet in an NVSwitch (nvFabric): elsewhere the
	// table is wrong, whatever the GPU.
	if !allNV || n < 3 {
		if err := mx.symmetric(file); err != nil {
			return "", nil, err
		}
	}
	model, inferred := opt.GPU, ""
	if model == "" {
		// Only what SXM boards show: NVLink bridges between PCIe cards
		// show NV2 (RTX, Quadro) and NV12 (A100 and H100 PCIe) too, for
		// one pair or two.
		switch {
		case maxNV == 18:
			model, inferred = "H100-SXM", "NV18 (18 NVLink ports: H100, H200 or B200 SXM; pass --gpu H200-SXM or --gpu B200 for those)"
		case maxNV == 12 && allNV && n >= 4:
			model, inferred = "A100-SXM4-80GB", "NV12 (fewer where a link is down) between every pair of 4 or more GPUs (NVSwitch, 12 NVLink3 ports: A100 SXM4)"
		case maxNV >= 1 && maxNV <= 2 && n >= 4 && minPeers >= 3:
			model, inferred = "V100-SXM2", "NV1/NV2 among 4 or more GPUs, each to 3 or more peers (hybrid cube-mesh of 6 NVLink2 ports: V100 SXM2)"
		case maxNV > 0:
			line, col := mx.cellOf(fmt.Sprintf("NV%d", maxNV))
			return "", nil, fmt.Errorf("%s:%d:%d: NV%d between %d GPUs does not say which GPU this is (SXM boards and NVLink-bridged PCIe cards both show it; nvidia-smi topo -m names none): pass --gpu, one of %s", file, line, col, maxNV, n, strings.Join(models.GPUNames(), ", "))
		default:
			return "", nil, fmt.Errorf("%s:1:1: the table does not say which GPU this is (nvidia-smi topo -m names none): pass --gpu, one of %s", file, strings.Join(models.GPUNames(), ", "))
		}
	}
	g, ok := models.LookupGPU(model)
	if !ok {
		return "", nil, fmt.Errorf("%s: unknown GPU model %q; models: %s", file, model, strings.Join(models.GPUNames(), ", "))
	}
	pcie := opt.PCIe
	if pcie == "" {
		pcie = g.PCIe
	}
	if _, ok := models.LookupLink(pcie); !ok {
		return "", nil, fmt.Errorf("%s: unknown PCIe link type %q; types: %s", file, pcie, strings.Join(models.LinkNames(), ", "))
	}
	if maxNV > 0 && g.NVLinkGen == "" {
		line, col := mx.cellOf(fmt.Sprintf("NV%d", maxNV))
		return "", nil, fmt.Errorf("%s:%d:%d: the table shows NVLink, which %s does not have: pass the right --gpu (one with NVLink: %s)", file, line, col, model, strings.Join(nvlinkGPUs(), ", "))
	}
	if maxNV > g.NVLinks && g.NVLinks > 0 {
		line, col := mx.cellOf(fmt.Sprintf("NV%d", maxNV))
		return "", nil, fmt.Errorf("%s:%d:%d: the table shows NV%d, more links than the %d of %s: pass the right --gpu", file, line, col, maxNV, g.NVLinks, model)
	}
	fabric := nvFabric(mx.rel, n, g.NVLinks)
	// Hosts: one per NUMA node, or per distinct CPU affinity.
	hostOf := make([]int, n)
	var hostKeys []string
	var hostCores []int
	// A row without a NUMA node (N/A) beside rows with one takes the node
	// of a row with the same CPU affinity: one socket, not two.
	nodeOf := map[string]string{}
	for _, r := range mx.rows {
		if r.numa != "" && r.cpus != "" {
			if _, seen := nodeOf[r.cpus]; !seen {
				nodeOf[r.cpus] = r.numa
			}
		}
	}
	for i, r := range mx.rows {
		key := r.numa
		if key == "" {
			key = r.cpus
			if node, ok := nodeOf[r.cpus]; ok {
				key = node
			}
		}
		h := -1
		for k, x := range hostKeys {
			if x == key {
				h = k
			}
		}
		if h < 0 {
			h = len(hostKeys)
			hostKeys = append(hostKeys, key)
			hostCores = append(hostCores, r.cores)
		}
		hostOf[i] = h
	}
	// NUMA nodes (or CPU lists) in their order: cpu0 the lowest.
	numaOrder(hostOf, hostKeys, hostCores)
	// PCIe groups: GPUs related by PIX or PXB, directly or through a NIC
	// both reach by PIX, share a switch.
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int) { parent[find(a)] = find(b) }
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && (mx.rel[i][j] == "PIX" || mx.rel[i][j] == "PXB") {
				union(i, j)
			}
		}
	}
	for c := n; c < len(mx.cols); c++ {
		first := -1
		for i := 0; i < n; i++ {
			if mx.rel[i][c] == "PIX" {
				if first >= 0 {
					union(first, i)
				}
				first = i
			}
		}
	}
	groupOf := map[int][]int{}
	var roots []int
	for i := 0; i < n; i++ {
		r := find(i)
		if len(groupOf[r]) == 0 {
			roots = append(roots, r)
		}
		groupOf[r] = append(groupOf[r], i)
	}
	var b strings.Builder
	name := opt.Name
	if name == "" {
		name = "imported"
	}
	fmt.Fprintf(&b, "# Imported by gpusim topo import from %s (the text of nvidia-smi topo -m).\n", file)
	fmt.Fprintf(&b, "# What the table does not say, and what was assumed:\n")
	if inferred != "" {
		fmt.Fprintf(&b, "# - GPU model %s, inferred from %s.\n", model, inferred)
	} else {
		fmt.Fprintf(&b, "# - GPU model %s, as given.\n", model)
	}
	fmt.Fprintf(&b, "# - PCIe links %s (the model's unless given), GPU to switch and switch to host alike.\n", pcie)
	fmt.Fprintf(&b, "# - A host per NUMA node (or CPU affinity) with as many cores as logical CPUs listed;\n")
	fmt.Fprintf(&b, "#   hosts joined by the upi socket-link preset, each to each (up to %d hosts; more, in a chain).\n", meshHosts)
	fmt.Fprintf(&b, "# - GPUs with PIX or PXB between them (or PIX to one NIC) share a PCIe switch; a pair\n")
	fmt.Fprintf(&b, "#   shown as NV# hides its PCIe relation, so such GPUs get a switch only when a NIC\n")
	fmt.Fprintf(&b, "#   reveals it. NICs are left out.\n")
	if opt.NoP2P {
		fmt.Fprintf(&b, "# - No P2P over PCIe (as told): hosts and PCIe switches have p2p: false.\n")
	}
	if fabric != nil {
		most := slices.Max(fabric)
		for i, c := range fabric {
			if c < most {
				fmt.Fprintf(&b, "# - GPU%d shows NV%d where others show NV%d: fewer working NVLinks (one down?); it gets\n#   %d links to the NVSwitch, as each GPU gets the most its row shows.\n", i, c, most, c)
			}
		}
	}
	fmt.Fprintf(&b, "name: %s\n", yamlString(name))
	fmt.Fprintf(&b, "description: %s\n", yamlString(fmt.Sprintf("%d x %s imported from nvidia-smi topo -m", n, model)))
	b.WriteString("hosts:\n")
	for h := range hostKeys {
		fmt.Fprintf(&b, "  - {name: cpu%d", h)
		if c := hostCores[h]; c > 0 {
			fmt.Fprintf(&b, ", cores: %d", c)
		}
		if opt.NoP2P {
			b.WriteString(", p2p: false")
		}
		b.WriteString("}\n")
	}
	b.WriteString("gpus:\n")
	for i := range mx.rows {
		fmt.Fprintf(&b, "  - {name: gpu%d, model: %s, host: cpu%d}\n", i, model, hostOf[i])
	}
	var switches, links []string
	if fabric != nil {
		sw := "{name: nvswitch, kind: nvswitch"
		if g.NVLS() {
			sw += ", nvls: true"
		}
		switches = append(switches, sw+"}")
		for i := 0; i < n; i++ {
			links = append(links, fmt.Sprintf("{ends: [gpu%d, nvswitch], type: %s, count: %d}", i, g.NVLinkGen, fabric[i]))
		}
	} else {
		if err := mx.symmetric(file); err != nil {
			return "", nil, err
		}
		// Links joined GPU to GPU: a GPU's row may not show more than
		// its ports in all.
		for i := 0; i < n && g.NVLinks > 0; i++ {
			all := 0
			for j := 0; j < n; j++ {
				if j != i {
					all += nvCount(mx.rel[i][j])
				}
			}
			if all > g.NVLinks {
				r := mx.rows[i]
				return "", nil, fmt.Errorf("%s:%d:1: %s's row shows %d NVLinks to its peers in all, more than the %d ports of %s (nor can the GPUs meet in an NVSwitch: through one, every GPU shows NVLink to every peer, its own count to each, or its peer's where that is fewer): pass the right --gpu, or check the table", file, r.line, r.name, all, g.NVLinks, model)
			}
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if k := nvCount(mx.rel[i][j]); k > 0 {
					links = append(links, fmt.Sprintf("{ends: [gpu%d, gpu%d], type: %s, count: %d}", i, j, g.NVLinkGen, k))
				}
			}
		}
	}
	for k, r := range roots {
		members := groupOf[r]
		if len(members) == 1 {
			links = append(links, fmt.Sprintf("{ends: [gpu%d, cpu%d], type: %s}", members[0], hostOf[members[0]], pcie))
			continue
		}
		sw := fmt.Sprintf("pcie%d", k)
		if opt.NoP2P {
			switches = append(switches, "{name: "+sw+", p2p: false}")
		} else {
			switches = append(switches, "{name: "+sw+"}")
		}
		for _, i := range members {
			links = append(links, fmt.Sprintf("{ends: [gpu%d, %s], type: %s}", i, sw, pcie))
		}
		links = append(links, fmt.Sprintf("{ends: [%s, cpu%d], type: %s}", sw, hostOf[members[0]], pcie))
	}
	// Every two hosts joined, up to meshHosts: four sockets are joined each
	// to each (three UPI links a socket), and a socket's NUMA nodes all
	// share its fabric. Past that (the table cannot say which nodes share a
	// socket) a chain, as links between every two of hundreds would be
	// tens of thousands.
	for h := 0; h < len(hostKeys); h++ {
		for k := h + 1; k < len(hostKeys); k++ {
			if len(hostKeys) <= meshHosts || k == h+1 {
				links = append(links, fmt.Sprintf("{ends: [cpu%d, cpu%d], type: upi}", h, k))
			}
		}
	}
	if len(switches) > 0 {
		b.WriteString("switches:\n")
		for _, s := range switches {
			b.WriteString("  - " + s + "\n")
		}
	}
	b.WriteString("links:\n")
	for _, l := range links {
		b.WriteString("  - " + l + "\n")
	}
	text := b.String()
	t, err := Load(name+".yaml", []byte(text))
	if err != nil {
		return "", nil, fmt.Errorf("%s: the imported topology does not load (a bug in topo import): %v", file, err)
	}
	return text, t, nil
}

// sgrRe matches a terminal's color or underline code, as nvidia-smi writes
// around its header on a terminal (\x1b[4m ... \x1b[0m), or what is left
// of one whose escape a paste dropped ([4m).
var sgrRe = regexp.MustCompile("\x1b?\\[[0-9;]*m")

// smiText is the text of a pasted table as parseSMI reads it: UTF-16 (a
// Windows shell's redirect) decoded, a byte-order mark dropped, terminal
// codes and no-break spaces (a browser's or chat's copy) blanked as as many
// spaces, so that columns stay where they were, and lines ended by CR LF,
// LF or a lone CR alike.
func smiText(data []byte) string {
	if len(data) >= 2 && (data[0] == 0xff && data[1] == 0xfe || data[0] == 0xfe && data[1] == 0xff) {
		u := make([]uint16, 0, len(data)/2)
		for i := 2; i+1 < len(data); i += 2 {
			if data[0] == 0xff {
				u = append(u, uint16(data[i])|uint16(data[i+1])<<8)
			} else {
				u = append(u, uint16(data[i])<<8|uint16(data[i+1]))
			}
		}
		data = []byte(string(utf16.Decode(u)))
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = sgrRe.ReplaceAllStringFunc(text, func(m string) string { return strings.Repeat(" ", utf8.RuneCountInString(m)) })
	text = strings.ReplaceAll(text, "\u00a0", " ")
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}

// parseSMI reads the device table: a header naming the columns, then a row
// per device.
func parseSMI(file, text string) (*smiMatrix, error) {
	lines := strings.Split(smiText([]byte(text)), "\n")
	// The header is the first line whose first field is GPU0 and whose next
	// line that is not blank (a paste may double the line ends) starts with
	// GPU0 too (the first row).
	hdr := -1
	for i := 0; i+1 < len(lines) && hdr < 0; i++ {
		f := strings.Fields(lines[i])
		if len(f) == 0 || f[0] != "GPU0" {
			continue
		}
		for k := i + 1; k < len(lines); k++ {
			if nf := strings.Fields(lines[k]); len(nf) > 0 {
				if nf[0] == "GPU0" {
					hdr = i
				}
				break
			}
		}
	}
	if hdr < 0 {
		return nil, fmt.Errorf("%s:1:1: no nvidia-smi topo -m table: want a header line naming GPU0 GPU1 ... and a row per GPU below it", file)
	}
	hf, hcols := fieldsWithColumns(lines[hdr])
	mx := &smiMatrix{}
	for _, c := range hf {
		if c == "CPU" || c == "NUMA" || c == "GPU" {
			break
		}
		mx.cols = append(mx.cols, c)
	}
	hasCPU := strings.Contains(lines[hdr], "CPU Affinity")
	hasNUMA := strings.Contains(lines[hdr], "NUMA Affinity")
	ncols := len(mx.cols)
	for li := hdr + 1; li < len(lines); li++ {
		l := lines[li]
		if strings.TrimSpace(l) == "" {
			// A paste's doubled line ends: the table goes on where the
			// next line that is not blank is a device's row (not the
			// legend, nor a second table's header, whose second field
			// names a device too).
			k := li + 1
			for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
				k++
			}
			if k == len(lines) {
				break
			}
			if nf := strings.Fields(lines[k]); len(nf) < 2 || !isDeviceName(nf[0], mx.cols) || isDeviceName(nf[1], mx.cols) {
				break
			}
			continue
		}
		f, cols := fieldsWithColumns(l)
		if len(f) > 0 && isGPUName(f[0]) && !isDeviceName(f[0], mx.cols) {
			// Not the legend: a GPU the import would drop unseen.
			return nil, fmt.Errorf("%s:%d:%d: row %s names a GPU the header does not: the header must name every GPU that has a row", file, li+1, cols[0], f[0])
		}
		if len(f) == 0 || !isDeviceName(f[0], mx.cols) {
			break // the legend below the table
		}
		r := smiRow{name: f[0], line: li + 1}
		if len(f) < 1+ncols {
			return nil, fmt.Errorf("%s:%d:%d: row %s has %d cells, the header names %d devices", file, li+1, cols[len(cols)-1], f[0], len(f)-1, ncols)
		}
		r.cells = f[1 : 1+ncols]
		r.cellCols = cols[1 : 1+ncols]
		rest := f[1+ncols:]
		if hasCPU && len(rest) > 0 {
			r.cpus = rest[0]
			rest = rest[1:]
			if c, ok := countCPUs(r.cpus); ok {
				if c > maxHostCores {
					return nil, fmt.Errorf("%s:%d:%d: %s's CPU Affinity lists more than %d distinct CPUs: a host has at most %d cores, so the list may name at most that many", file, li+1, cols[1+ncols], r.name, maxHostCores, maxHostCores)
				}
				r.cores = c
			} else if r.cpus != "N/A" {
				return nil, fmt.Errorf("%s:%d:%d: %s's CPU Affinity %q is not a list of CPUs: want ranges and numbers, such as 0-55,112-167, or N/A", file, li+1, cols[1+ncols], r.name, r.cpus)
			}
		}
		if hasNUMA && len(rest) > 0 && rest[0] != "N/A" {
			r.numa = rest[0]
		}
		if strings.HasPrefix(r.name, "GPU") {
			if want := fmt.Sprintf("GPU%d", len(mx.rows)); r.name != want {
				return nil, fmt.Errorf("%s:%d:%d: row %s where %s was expected: rows list the GPUs in order", file, li+1, cols[0], r.name, want)
			}
			mx.rows = append(mx.rows, r)
		}
	}
	n := len(mx.rows)
	if n == 0 {
		return nil, fmt.Errorf("%s:%d:1: the table has no GPU rows", file, hdr+2)
	}
	for i := 0; i < n; i++ {
		if mx.cols[i] != fmt.Sprintf("GPU%d", i) {
			return nil, fmt.Errorf("%s:%d:1: column %d is %s: the header must name GPU0..GPU%d first", file, hdr+1, i+1, mx.cols[i], n-1)
		}
	}
	// A GPU column past the rows would be taken for a NIC's, and its GPU
	// dropped unseen.
	for j := n; j < ncols; j++ {
		if isGPUName(mx.cols[j]) {
			last := mx.rows[n-1]
			return nil, fmt.Errorf("%s:%d:%d: the header names %s, but the table has no row %s: the GPU rows end with %s at line %d; give every GPU of the header its row, in order", file, hdr+1, hcols[j], mx.cols[j], mx.cols[j], last.name, last.line)
		}
	}
	mx.rel = make([][]string, n)
	for i, r := range mx.rows {
		mx.rel[i] = make([]string, ncols)
		for j, c := range r.cells {
			if !validRelation(c) {
				return nil, fmt.Errorf("%s:%d:%d: %q is not a connection type; types: %s", file, r.line, r.cellCols[j], c, smiRelations)
			}
			if (i == j) != (c == "X") {
				return nil, fmt.Errorf("%s:%d:%d: %q: X marks a GPU's own column and only it", file, r.line, r.cellCols[j], c)
			}
			mx.rel[i][j] = c
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			// Two NVLink counts may differ through an NVSwitch (a GPU with
			// a link down, counted from its row's side): FromNvidiaSMI
			// refuses them elsewhere.
			if mx.rel[i][j] != mx.rel[j][i] && (nvCount(mx.rel[i][j]) == 0 || nvCount(mx.rel[j][i]) == 0) {
				return nil, mx.asymmetric(file, i, j)
			}
		}
	}
	if len(mx.rows) > 1024 {
		return nil, fmt.Errorf("%s:%d:1: %d GPUs: gpusim imports tables of up to 1024", file, hdr+1, len(mx.rows))
	}
	return mx, nil
}

// meshHosts is the most hosts an import joins each to each (two sockets
// of four NUMA nodes each); more are chained.
const meshHosts = 8

// nvFabric is, where the NVLink counts say the GPUs meet in an NVSwitch,
// each GPU's links to it, and nil otherwise. That is where every pair of 3
// or more GPUs shows NVLink and every row more links in all than a GPU has
// ports (so they cannot be links GPU to GPU). A GPU with fewer working
// links than its peers shows fewer: to every peer (counted from its side),
// or the fewer of the two counts (as topo discover writes it); each GPU
// gets the most its row shows, and a pair showing fewer than both GPUs'
// counts is no fabric.
func nvFabric(rel [][]string, n, ports int) []int {
	if n < 3 {
		return nil
	}
	links := make([]int, n)
	for i := 0; i < n; i++ {
		all := 0
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			k := nvCount(rel[i][j])
			if k == 0 {
				return nil
			}
			all += k
			links[i] = max(links[i], k)
		}
		if all <= ports {
			return nil
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && nvCount(rel[i][j]) < min(links[i], links[j]) {
				return nil
			}
		}
	}
	return links
}

// symmetric is the error for the first GPU pair whose relation differs
// each way, nil if none does.
func (mx *smiMatrix) symmetric(file string) error {
	for i := range mx.rel {
		for j := range mx.rows {
			if mx.rel[i][j] != mx.rel[j][i] {
				return mx.asymmetric(file, i, j)
			}
		}
	}
	return nil
}

// asymmetric is the error for GPU i to j unlike j to i.
func (mx *smiMatrix) asymmetric(file string, i, j int) error {
	r := mx.rows[i]
	return fmt.Errorf("%s:%d:%d: GPU%d to GPU%d is %s but GPU%d to GPU%d is %s: the table must be symmetric", file, r.line, r.cellCols[j], i, j, mx.rel[i][j], j, i, mx.rel[j][i])
}

// cellOf is the line and column of the first GPU cell that reads rel.
func (mx *smiMatrix) cellOf(rel string) (line, col int) {
	for _, r := range mx.rows {
		for j, c := range r.cells {
			if c == rel {
				return r.line, r.cellCols[j]
			}
		}
	}
	return 1, 1
}

// nvlinkGPUs are the GPU presets with NVLink.
func nvlinkGPUs() []string {
	var out []string
	for _, name := range models.GPUNames() {
		if g, ok := models.LookupGPU(name); ok && g.NVLinkGen != "" {
			out = append(out, name)
		}
	}
	return out
}

// numaOrder renumbers the hosts in the order of their NUMA node ids where
// every key is one (a table lists GPUs, not nodes, in order: NPS4's first
// GPUs may be on node 3), or else of their lowest CPU where every key is a
// CPU list (an older driver's table has no NUMA column: cpu0 holds CPU 0,
// as node 0 does), changing hostOf, keys and cores in place. Hosts keyed
// some by node and some by CPUs keep the table's order: node ids and CPU
// numbers do not compare.
func numaOrder(hostOf []int, keys []string, cores []int) {
	ids := make([]int, len(keys))
	nodes := 0
	for h, k := range keys {
		if id, err := strconv.Atoi(k); err == nil && id >= 0 {
			ids[h] = id
			nodes++
		}
	}
	switch nodes {
	case len(keys):
	case 0: // every key a CPU list
		for h, k := range keys {
			lo, ok := lowestCPU(k)
			if !ok {
				return
			}
			ids[h] = lo
		}
	default:
		return
	}
	order := make([]int, len(keys)) // order[new] = old
	for h := range order {
		order[h] = h
	}
	sort.SliceStable(order, func(a, b int) bool { return ids[order[a]] < ids[order[b]] })
	newOf := make([]int, len(keys))
	oldKeys, oldCores := slices.Clone(keys), slices.Clone(cores)
	for nw, old := range order {
		newOf[old] = nw
		keys[nw], cores[nw] = oldKeys[old], oldCores[old]
	}
	for i := range hostOf {
		hostOf[i] = newOf[hostOf[i]]
	}
}

// fieldsWithColumns splits a line on blanks and returns each field with
// its 1-based column.
func fieldsWithColumns(l string) ([]string, []int) {
	var f []string
	var c []int
	start := -1
	for i, r := range l + " " {
		if r == ' ' || r == '\t' {
			if start >= 0 {
				f = append(f, l[start:i])
				c = append(c, start+1)
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return f, c
}

func isDeviceName(s string, cols []string) bool {
	for _, c := range cols {
		if c == s {
			return true
		}
	}
	return false
}

// isGPUName reports whether s names a GPU as nvidia-smi does: GPU0, GPU1...
func isGPUName(s string) bool {
	d, ok := strings.CutPrefix(s, "GPU")
	if !ok || d == "" {
		return false
	}
	for _, r := range d {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func validRelation(c string) bool {
	switch c {
	case "X", "SYS", "NODE", "PHB", "PXB", "PIX":
		return true
	}
	return nvCount(c) > 0
}

// nvCount is the link count of "NV12", or 0.
func nvCount(c string) int {
	if !strings.HasPrefix(c, "NV") {
		return 0
	}
	k, err := strconv.Atoi(c[2:])
	if err != nil || k < 1 || k > 64 {
		return 0
	}
	return k
}

// lowestCPU is the lowest CPU of an affinity list such as "52-103,156-207";
// ok is false where s is no such list.
func lowestCPU(s string) (lo int, ok bool) {
	if _, ok := countCPUs(s); !ok {
		return 0, false
	}
	lo = -1
	for _, part := range strings.Split(s, ",") {
		a, _, _ := strings.Cut(part, "-")
		if k, _ := strconv.Atoi(a); lo < 0 || k < lo {
			lo = k
		}
	}
	return lo, true
}

// countCPUs counts the distinct CPUs of an affinity list such as
// "0-19,40-59": the size of the union of its ranges, so that a CPU listed
// twice counts once. Past maxHostCores it stops counting and returns
// maxHostCores+1. ok is false where s is no such list ("N/A").
// O(k log k) for k ranges.
func countCPUs(s string) (n int, ok bool) {
	type span struct{ lo, hi int }
	var spans []span
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err1 := strconv.Atoi(a)
		hi := lo
		var err2 error
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || lo < 0 || hi < lo {
			return 0, false
		}
		spans = append(spans, span{lo, hi})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	// Merge ranges that overlap or touch; each merged range adds its size.
	// Sizes are hi-lo+1 with hi up to MaxInt: add hi-lo (which cannot
	// overflow, lo >= 0) and stop once past the limit.
	cur := spans[0]
	add := func(sp span) {
		if d := sp.hi - sp.lo; d >= maxHostCores || n+d+1 > maxHostCores {
			n = maxHostCores + 1
		} else {
			n += d + 1
		}
	}
	for _, sp := range spans[1:] {
		if sp.lo-1 <= cur.hi {
			cur.hi = max(cur.hi, sp.hi)
			continue
		}
		add(cur)
		cur = sp
	}
	add(cur)
	return n, true
}

// yamlString quotes s for YAML when it needs it.
func yamlString(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == ' ' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 && s[0] != ' ' && s[len(s)-1] != ' ' {
		return s
	}
	return strconv.Quote(s)
}
