package topologies

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gpusim/sim"
)

func importFile(t *testing.T, name string, opt SMIOptions) (string, *Topology) {
	t.Helper()
	data, err := os.ReadFile("testdata/smi/" + name)
	if err != nil {
		t.Fatal(err)
	}
	text, tp, err := FromNvidiaSMI(name, data, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text, tp
}

func nvLinks(m *sim.Machine) map[[2]string]float64 {
	out := map[[2]string]float64{}
	for _, l := range m.Links {
		if l.Kind == sim.LinkNVLink {
			out[[2]string{m.Nodes[l.A].Name, m.Nodes[l.B].Name}] = l.Bandwidth
		}
	}
	return out
}

func TestImportDGX1(t *testing.T) {
	text, tp := importFile(t, "dgx1.txt", SMIOptions{})
	m := tp.Machine
	if len(m.GPUs) != 8 || len(m.Hosts) != 2 {
		t.Fatalf("%d GPUs, %d hosts; want 8 and 2", len(m.GPUs), len(m.Hosts))
	}
	for _, g := range m.GPUs {
		if g.Model != "V100-SXM2" {
			t.Errorf("%s is a %s; NV1/NV2 say V100-SXM2", g.Name, g.Model)
		}
	}
	// CPU Affinity 0-19,40-59: 40 logical CPUs per host.
	if m.Hosts[0].Cores != 40 || m.Hosts[1].Cores != 40 {
		t.Errorf("cores %d, %d; want 40 each", m.Hosts[0].Cores, m.Hosts[1].Cores)
	}
	// GPU0's row: NV1 NV1 NV2 NV2 to GPU1..GPU4, SYS to the rest.
	nv := nvLinks(m)
	if len(nv) != 16 {
		t.Errorf("%d NVLink links, want 16 (the table's NV pairs)", len(nv))
	}
	one := nv[[2]string{"gpu0", "gpu1"}]
	if two := nv[[2]string{"gpu0", "gpu3"}]; one <= 0 || two != 2*one {
		t.Errorf("gpu0-gpu1 (NV1) %g, gpu0-gpu3 (NV2) %g: want the second twice the first", one, two)
	}
	for a := 0; a < 8; a++ {
		for b := 0; b < 8; b++ {
			if a == b {
				continue
			}
			want := sim.PathNVLink
			if _, ok := nv[[2]string{m.GPUs[min(a, b)].Name, m.GPUs[max(a, b)].Name}]; !ok {
				want = sim.PathStaged // SYS: across the sockets
			}
			if got := m.PathBetween(a, b).Kind; got != want {
				t.Errorf("gpu%d -> gpu%d: path %v, want %v", a, b, got, want)
			}
		}
	}
	// The NICs reveal the PCIe switches: GPU0 and GPU1 are PIX to mlx5_0.
	for _, pair := range [][2]string{{"gpu0", "gpu1"}, {"gpu2", "gpu3"}, {"gpu4", "gpu5"}, {"gpu6", "gpu7"}} {
		if !strings.Contains(text, "{ends: ["+pair[0]+", pcie") {
			t.Errorf("%s has no PCIe switch:\n%s", pair[0], text)
		}
	}
	if n := strings.Count(text, "{name: pcie"); n != 4 {
		t.Errorf("%d PCIe switches, want 4 (a pair of GPUs under each NIC's switch):\n%s", n, text)
	}
}

// The shipped DGX-1 numbers its GPUs as nvidia-smi (and CUDA) does: each
// pair has the NVLink bandwidth the capture's NV1 and NV2 give it.
func TestShippedDGX1MatchesItsCapture(t *testing.T) {
	_, imp := importFile(t, "dgx1.txt", SMIOptions{})
	ship, err := LoadShipped("dgx1-v100")
	if err != nil {
		t.Fatal(err)
	}
	got, want := nvLinks(ship.Machine), nvLinks(imp.Machine)
	if len(got) != len(want) {
		t.Errorf("%d NVLink pairs shipped, %d in the capture", len(got), len(want))
	}
	for pair, bw := range want {
		if got[pair] != bw {
			t.Errorf("%s-%s: shipped %g B/s, the capture's %g", pair[0], pair[1], got[pair], bw)
		}
	}
}

func TestImportNVSwitchMachines(t *testing.T) {
	for _, c := range []struct {
		file, gpu, model, gen string
		count, cores          int
		nvls                  bool
	}{
		{"dgx-a100.txt", "", "A100-SXM4-80GB", "nvlink3", 12, 128, false},
		{"dgx-h100.txt", "", "H100-SXM", "nvlink4", 18, 52, true},
		// A DGX B200 shows the same table (NV18 to every peer): with --gpu
		// B200 its 18 links are NVLink5, and NCCL runs NVLS on Blackwell.
		{"dgx-h100.txt", "B200", "B200", "nvlink5", 18, 52, true},
	} {
		t.Run(c.file+c.gpu, func(t *testing.T) {
			text, tp := importFile(t, c.file, SMIOptions{Name: "x", GPU: c.gpu})
			m := tp.Machine
			if len(m.GPUs) != 8 || len(m.Hosts) != 2 || m.Hosts[0].Cores != c.cores {
				t.Fatalf("%d GPUs, %d hosts, %d cores; want 8, 2, %d", len(m.GPUs), len(m.Hosts), m.Hosts[0].Cores, c.cores)
			}
			if m.GPUs[0].Model != c.model {
				t.Errorf("model %s, want %s", m.GPUs[0].Model, c.model)
			}
			// Every GPU pair shows the same NV count, more than a GPU has
			// ports for 7 peers: an NVSwitch, each GPU with all its links.
			want := "type: " + c.gen + ", count: " + strconv.Itoa(c.count) + "}"
			if n := strings.Count(text, "nvswitch], "+want); n != 8 {
				t.Errorf("%d GPU-NVSwitch links %q, want 8:\n%s", n, want, text)
			}
			if strings.Contains(text, "nvls: true") != c.nvls {
				t.Errorf("nvls: want %v:\n%s", c.nvls, text)
			}
			for b := 1; b < 8; b++ {
				if got := m.PathBetween(0, b).Kind; got != sim.PathNVLink {
					t.Errorf("gpu0 -> gpu%d: path %v, want NVLink", b, got)
				}
			}
		})
	}
}

// The imported H100 box moves a peer copy as fast as the shipped DGX H100:
// both are 18 NVLink4 links a GPU into an NVSwitch.
func TestImportedH100MatchesShipped(t *testing.T) {
	_, imp := importFile(t, "dgx-h100.txt", SMIOptions{})
	ship, err := LoadShipped("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	copyTime := func(m *sim.Machine) sim.Time {
		p := &sim.Program{Name: "c", Streams: []sim.Stream{{GPU: 0, Name: "s"}}, Threads: []sim.Thread{{Name: "t", Host: 0,
			Ops: []sim.Op{{ID: "c", Kind: sim.OpCopy, Stream: 0, Src: m.GPUs[0].Node, Dst: m.GPUs[5].Node, Bytes: 1 << 30}}}}}
		res, err := sim.Run(m, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Ops[0].End - res.Ops[0].Start
	}
	if a, b := copyTime(imp.Machine), copyTime(ship.Machine); a != b {
		t.Errorf("1 GiB gpu0 -> gpu5: imported %s, shipped %s", a, b)
	}
}

func TestImportErrors(t *testing.T) {
	h100, _ := os.ReadFile("testdata/smi/dgx-h100.txt")
	for _, c := range []struct {
		name, text string
		opt        SMIOptions
		want       string
	}{
		{"empty", "", SMIOptions{}, "t.txt:1:1: no nvidia-smi topo -m table"},
		{"garbage", "\x00\x01 binary", SMIOptions{}, "no nvidia-smi topo -m table"},
		{"bad cell", "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNVX\t X \n", SMIOptions{}, `t.txt:3:6: "NVX" is not a connection type; types: X, NV#`},
		{"asymmetric", "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tPIX\t X \n", SMIOptions{}, "t.txt:2:10: GPU0 to GPU1 is NV4 but GPU1 to GPU0 is PIX: the table must be symmetric"},
		{"short row", "\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\n", SMIOptions{}, "t.txt:3:"},
		{"no nvlink", "\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n", SMIOptions{}, "does not say which GPU this is (nvidia-smi topo -m names none): pass --gpu"},
		// At the first NV18 cell: line 4 (after two comments), "GPU0   X    " before it: column 13.
		{"wrong gpu", string(h100), SMIOptions{GPU: "L40S"}, "t.txt:4:13: the table shows NVLink, which L40S does not have: pass the right --gpu (one with NVLink: H100-SXM, H200-SXM, B200, A100-SXM4-80GB, V100-SXM2)"},
		// NV2 and NV12 between two GPUs are NVLink bridges of PCIe cards
		// as much as SXM boards: not inferred (they were V100 and A100).
		{"bridged NV2 pair", "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n", SMIOptions{}, "t.txt:2:10: NV2 between 2 GPUs does not say which GPU this is"},
		// Four bridged cards: NV2 within each pair, one NVLink peer a GPU
		// (a cube mesh's have 3 or 4).
		{"bridged NV2 pairs", "\tGPU0\tGPU1\tGPU2\tGPU3\nGPU0\t X \tNV2\tSYS\tSYS\nGPU1\tNV2\t X \tSYS\tSYS\nGPU2\tSYS\tSYS\t X \tNV2\nGPU3\tSYS\tSYS\tNV2\t X \n", SMIOptions{}, "t.txt:2:10: NV2 between 4 GPUs does not say which GPU this is"},
		{"bridged NV12 pair", "\tGPU0\tGPU1\nGPU0\t X \tNV12\nGPU1\tNV12\t X \n", SMIOptions{}, "t.txt:2:10: NV12 between 2 GPUs does not say which GPU this is"},
		{"unknown gpu", string(h100), SMIOptions{GPU: "B300"}, `unknown GPU model "B300"`},
		{"unknown pcie", string(h100), SMIOptions{PCIe: "pcie9x16"}, `unknown PCIe link type "pcie9x16"`},
		{"X off the diagonal", "\tGPU0\tGPU1\nGPU0\t X \t X \nGPU1\t X \t X \n", SMIOptions{}, "X marks a GPU's own column and only it"},
		// A GPU of the header without its row, or a row without its
		// column, is refused rather than dropped (GPU2's column was taken
		// for a NIC's): at the header's GPU2, line 1 after
		// "\tGPU0\tGPU1\t", column 12; at the row's first field.
		{"missing row", "\tGPU0\tGPU1\tGPU2\tCPU Affinity\nGPU0\t X \tNV4\tSYS\t0-15\nGPU1\tNV4\t X \tSYS\t0-15\n", SMIOptions{GPU: "H100-SXM"},
			"t.txt:1:12: the header names GPU2, but the table has no row GPU2: the GPU rows end with GPU1 at line 3; give every GPU of the header its row, in order"},
		{"missing row before a NIC's", "\tGPU0\tGPU1\tGPU2\tNIC0\nGPU0\t X \tNV4\tSYS\tPIX\nGPU1\tNV4\t X \tSYS\tPIX\nNIC0\tPIX\tPIX\tSYS\t X \n", SMIOptions{GPU: "H100-SXM"},
			"t.txt:1:12: the header names GPU2, but the table has no row GPU2"},
		{"row not in the header", "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \nGPU2\tNV4\tNV4\t X \n", SMIOptions{GPU: "H100-SXM"},
			"t.txt:4:1: row GPU2 names a GPU the header does not: the header must name every GPU that has a row"},
		// GPU0 of four V100s (6 ports) shows NV2 + NV3 + NV2: 7 links,
		// not the same to every peer (no NVSwitch): refused at its row.
		{"more links than ports", "\tGPU0\tGPU1\tGPU2\tGPU3\nGPU0\t X \tNV2\tNV3\tNV2\nGPU1\tNV2\t X \tNV1\tNV1\nGPU2\tNV3\tNV1\t X \tNV1\nGPU3\tNV2\tNV1\tNV1\t X \n", SMIOptions{GPU: "V100-SXM2"},
			"t.txt:2:1: GPU0's row shows 7 NVLinks to its peers in all, more than the 6 ports of V100-SXM2 (nor can the GPUs meet in an NVSwitch: through one, every GPU shows NVLink to every peer, its own count to each, or its peer's where that is fewer): pass the right --gpu, or check the table"},
	} {
		_, _, err := FromNvidiaSMI("t.txt", []byte(c.text), c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// With --gpu a PCIe-only table imports: two L40S under one switch.
	_, tp, err := FromNvidiaSMI("t.txt", []byte("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPIX\t0-15\nGPU1\tPIX\t X \t0-15\n"), SMIOptions{GPU: "L40S"})
	if err != nil {
		t.Fatal(err)
	}
	if k := tp.Machine.PathBetween(0, 1).Kind; k != sim.PathP2P {
		t.Errorf("two L40S PIX: path %v, want PCIe P2P", k)
	}
}

// A table as it reaches the importer from a terminal, a Windows shell, a
// browser or a chat imports as the plain one does: the header's underline
// codes (whole, or a paste's "[4m" without the escape), a byte-order mark,
// UTF-16 (PowerShell's redirect), lone CR line ends, no-break spaces for
// blanks, and a blank line after every line.
func TestImportPastedTables(t *testing.T) {
	plain, _ := os.ReadFile("testdata/smi/dgx-h100.txt")
	want, _, err := FromNvidiaSMI("t.txt", plain, SMIOptions{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(plain), "\n")
	hdr := 0
	for hdr < len(lines) && !strings.Contains(lines[hdr], "GPU1") {
		hdr++
	}
	underlined := func(open, shut string) string {
		l := slices.Clone(lines)
		l[hdr] = open + l[hdr] + shut
		return strings.Join(l, "\n")
	}
	utf16le := []byte{0xff, 0xfe}
	for _, r := range string(plain) {
		utf16le = append(utf16le, byte(r), byte(r>>8)) // ASCII
	}
	for name, text := range map[string]string{
		"underline codes":      underlined("\x1b[4m", "\x1b[0m"),
		"codes without escape": underlined("[4m", "[0m"),
		"byte-order mark":      "\ufeff" + strings.Join(lines[hdr:], "\n"), // before the header
		"UTF-16":               string(utf16le),
		"CR line ends":         strings.ReplaceAll(string(plain), "\n", "\r"),
		"no-break spaces":      strings.ReplaceAll(string(plain), " ", "\u00a0"),
		"double spaced":        strings.ReplaceAll(string(plain), "\n", "\n\n"),
		// A second paste after a blank line ends the first table.
		"two tables": string(plain) + "\n" + strings.Join(lines[hdr:], "\n"),
	} {
		got, _, err := FromNvidiaSMI("t.txt", []byte(text), SMIOptions{Name: "x"})
		if err != nil || got != want {
			t.Errorf("%s: %v; want the plain table's topology", name, err)
		}
	}
}

// smiTable is the text of nvidia-smi topo -m for n GPUs, each pair
// related by rel, with the header's columns after the GPUs' and each row's
// cells after its GPUs' (tail of the row's index).
func smiTable(n int, rel, columns string, tail func(i int) string) string {
	var b strings.Builder
	for j := range n {
		fmt.Fprintf(&b, "\tGPU%d", j)
	}
	b.WriteString(columns + "\n")
	for i := range n {
		fmt.Fprintf(&b, "GPU%d", i)
		for j := range n {
			if i == j {
				b.WriteString("\t X ")
			} else {
				b.WriteString("\t" + rel)
			}
		}
		b.WriteString(tail(i) + "\n")
	}
	return b.String()
}

// More than two hosts are joined each to each (a four-socket box's UPI,
// a socket's NUMA nodes), numbered in their NUMA ids' order: a DGX A100 in
// NPS4 lists GPU0 on node 3 first; cpu0 is node 1, the lowest here, and a
// copy from cpu0 to a GPU of node 7 crosses one inter-socket link.
func TestImportManyHosts(t *testing.T) {
	numa := []string{"3", "1", "7", "5"}
	text := smiTable(4, "NV12", "\tCPU Affinity\tNUMA Affinity", func(i int) string { return fmt.Sprintf("\t%d-%d\t%s", 16*i, 16*i+15, numa[i]) })
	out, tp, err := FromNvidiaSMI("t.txt", []byte(text), SMIOptions{GPU: "A100-SXM4-80GB"})
	if err != nil {
		t.Fatal(err)
	}
	m := tp.Machine
	// Nodes 1, 3, 5, 7 are cpu0..cpu3: GPU0 (node 3) on cpu1, GPU1 on
	// cpu0, GPU2 (node 7) on cpu3, GPU3 on cpu2.
	for i, h := range []int{1, 0, 3, 2} {
		if got := m.GPUs[i].Host; got != h {
			t.Errorf("gpu%d on host %d, want cpu%d", i, got, h)
		}
	}
	if n := strings.Count(out, "type: upi}"); n != 6 {
		t.Errorf("%d inter-socket links, want 6, one a pair of 4 hosts:\n%s", n, out)
	}
	// Past 8 hosts a chain: 16 NUMA nodes, 15 links (a mesh's 120 grew as
	// the square: 1024 took minutes).
	text = smiTable(16, "SYS", "\tNUMA Affinity", func(i int) string { return fmt.Sprintf("\t%d", i) })
	if out, _, err = FromNvidiaSMI("t.txt", []byte(text), SMIOptions{GPU: "L40S"}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "type: upi}"); n != 15 {
		t.Errorf("16 hosts: %d inter-socket links, want a chain of 15", n)
	}
	upi := 0
	r, _ := m.Route(m.Hosts[0].Node, m.GPUs[2].Node)
	for _, h := range r.Hops {
		if m.Links[h.Link].Kind == sim.LinkSocket {
			upi++
		}
	}
	if upi != 1 {
		t.Errorf("cpu0 to gpu2 crosses %d inter-socket links, want 1", upi)
	}
}

// A table without a NUMA column (an older driver's) keys hosts by CPU
// Affinity and numbers them by their lowest CPU: GPU0 and GPU1 on CPUs
// 52-103 and 156-207 are on cpu1, GPU2 and GPU3 on 0-51 and 104-155 on
// cpu0, the socket that holds CPU 0 (they were numbered in order of
// appearance: cpu0 was the second socket).
func TestImportHostsByLowestCPU(t *testing.T) {
	cpus := []string{"52-103,156-207", "52-103,156-207", "104-155,0-51", "104-155,0-51"}
	text := smiTable(4, "SYS", "\tCPU Affinity", func(i int) string { return "\t" + cpus[i] })
	_, tp, err := FromNvidiaSMI("t.txt", []byte(text), SMIOptions{GPU: "L40S"})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []int{1, 1, 0, 0} {
		if got := tp.Machine.GPUs[i].Host; got != h {
			t.Errorf("gpu%d on host %d, want cpu%d", i, got, h)
		}
	}
	// Hosts keyed some by NUMA node and some by CPUs (a node N/A whose
	// CPUs no node's row shares) keep the table's order: node 5 is cpu0
	// and CPUs 0-23 cpu1 (a node id and a CPU number do not compare).
	text = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tSYS\t24-47\t5\nGPU1\tSYS\t X \t0-23\tN/A\n"
	if _, tp, err = FromNvidiaSMI("t.txt", []byte(text), SMIOptions{GPU: "L40S"}); err != nil {
		t.Fatal(err)
	}
	if a, b := tp.Machine.GPUs[0].Host, tp.Machine.GPUs[1].Host; a != 0 || b != 1 {
		t.Errorf("mixed keys: gpu0 on host %d, gpu1 on %d; want cpu0 and cpu1, the table's order", a, b)
	}
}

// A row whose NUMA Affinity is N/A beside rows with a node and the same
// CPU Affinity is on that node: one host, not two joined by UPI.
func TestImportNUMAOfNA(t *testing.T) {
	text := "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tPIX\t0-47\t0\nGPU1\tPIX\t X \t0-47\tN/A\n"
	_, tp, err := FromNvidiaSMI("t.txt", []byte(text), SMIOptions{GPU: "L40S"})
	if err != nil {
		t.Fatal(err)
	}
	if m := tp.Machine; len(m.Hosts) != 1 || m.Hosts[0].Cores != 48 {
		t.Errorf("%d hosts (first of %d cores), want one of 48", len(m.Hosts), m.Hosts[0].Cores)
	}
}

// A host gets as many cores as the distinct CPUs its CPU Affinity lists:
// ranges that overlap or repeat count once. 0-65535 seventeen times is the
// 65536 CPUs 0..65535 (counted each time, 1,114,112: more than a host may
// have); 0-3,2-5,5,7 is 0..5 and 7, 7 CPUs; 0-1048575 is 2^20, the most a
// host may have (so is 0-524287,524289-1048576: 524288 and 524288). One
// more (0..1048576, in one range or three) is refused at the affinity's
// line and column: line 2, row GPU0, after "GPU0\t X \tNV4\t", column 14;
// so is a range whose size does not fit an int.
func TestImportCountsDistinctCPUs(t *testing.T) {
	table := func(aff string) string {
		return "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t" + aff + "\nGPU1\tNV4\t X \t" + aff + "\n"
	}
	for _, c := range []struct {
		aff   string
		cores int
		err   string
	}{
		{strings.Repeat("0-65535,", 16) + "0-65535", 65536, ""},
		{"0-3,2-5,5,7", 7, ""},
		{"7,5,0-3,2-5", 7, ""},
		{"0-19,40-59", 40, ""},
		{"0-1048575", 1 << 20, ""},
		{"0-524287,524288-1048575,17", 1 << 20, ""},
		{"0-1048576", 0, "t.txt:2:14: GPU0's CPU Affinity lists more than 1048576 distinct CPUs: a host has at most 1048576 cores, so the list may name at most that many"},
		{"0-524287,524289-1048576", 1 << 20, ""},
		{"1048576,0-524288,524288-1048575", 0, "t.txt:2:14: GPU0's CPU Affinity lists more than 1048576"},
		{"0-9223372036854775807", 0, "t.txt:2:14: GPU0's CPU Affinity lists more than 1048576"},
		{"9223372036854775807,0-9223372036854775807", 0, "t.txt:2:14: GPU0's CPU Affinity lists more than 1048576"},
		// Not a list: refused, not read as no cores.
		{"103-52", 0, `t.txt:2:14: GPU0's CPU Affinity "103-52" is not a list of CPUs: want ranges and numbers, such as 0-55,112-167, or N/A`},
		{"a-b,,", 0, `t.txt:2:14: GPU0's CPU Affinity "a-b,," is not a list of CPUs`},
		{"N/A", 0, ""},
	} {
		_, tp, err := FromNvidiaSMI("t.txt", []byte(table(c.aff)), SMIOptions{GPU: "H100-SXM"})
		switch {
		case c.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%.40s: error %v, want one starting %q", c.aff, err, c.err)
			}
		case err != nil:
			t.Errorf("%.40s: %v", c.aff, err)
		case len(tp.Machine.Hosts) != 1 || tp.Machine.Hosts[0].Cores != c.cores:
			t.Errorf("%.40s: hosts %+v, want one of %d cores", c.aff, tp.Machine.Hosts, c.cores)
		}
	}
}

func FuzzFromNvidiaSMI(f *testing.F) {
	files, _ := filepath.Glob("testdata/smi/*.txt")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, "")
			f.Add(b, "L40S")
		}
	}
	f.Add([]byte("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n"), "L40S")
	f.Fuzz(func(t *testing.T, data []byte, gpu string) {
		text, tp, err := FromNvidiaSMI("f.txt", data, SMIOptions{GPU: gpu})
		if err != nil {
			return
		}
		// What it writes loads again to the same machine.
		again, err := Load("again.yaml", []byte(text))
		if err != nil {
			t.Fatalf("the imported YAML does not load: %v\n%s", err, text)
		}
		if len(again.Machine.GPUs) != len(tp.Machine.GPUs) || len(again.Machine.Links) != len(tp.Machine.Links) {
			t.Fatalf("reloading changed the machine")
		}
	})
}

// TestImportNoP2P: four PCIe GPUs (two under each of two switches, one per
// socket) told to have no P2P: every GPU pair is staged through a host;
// without the option the pairs under one switch copy peer to peer.
func TestImportNoP2P(t *testing.T) {
	table := "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n" +
		"GPU0\t X \tPIX\tSYS\tSYS\t0-15\t0\n" +
		"GPU1\tPIX\t X \tSYS\tSYS\t0-15\t0\n" +
		"GPU2\tSYS\tSYS\t X \tPIX\t16-31\t1\n" +
		"GPU3\tSYS\tSYS\tPIX\t X \t16-31\t1\n"
	for _, noP2P := range []bool{false, true} {
		_, tp, err := FromNvidiaSMI("four.txt", []byte(table), SMIOptions{GPU: "RTX-4090", NoP2P: noP2P})
		if err != nil {
			t.Fatal(err)
		}
		m := tp.Machine
		if got := m.PathBetween(0, 1).Kind; (got == sim.PathStaged) != noP2P {
			t.Errorf("no P2P %v: gpu0 to gpu1 under one switch: %v", noP2P, got)
		}
		if got := m.PathBetween(0, 2).Kind; noP2P && got != sim.PathStaged {
			t.Errorf("no P2P: gpu0 to gpu2 across sockets: %v, want host-staged", got)
		}
	}
}

// A GPU with an NVLink down on an NVSwitch machine shows one link fewer:
// to every peer, counted from its row (GPU3's row NV17, its column NV18),
// or the fewer of the two counts (row and column NV17, as topo discover
// writes it). Either way the GPUs still meet in the NVSwitch, GPU3 with 17
// links and the others with 18, and the model is still inferred (NV11 among
// a DGX A100's NV12 too). A copy from gpu0 to gpu3 then runs at 17/18 of
// one to gpu5: the NVSwitch passes what gpu3's 17 links carry.
func TestImportDegradedNVSwitch(t *testing.T) {
	for _, c := range []struct {
		name, full, less, gen, model string
		fullN, lessN                 int
		rowOnly                      bool
	}{
		{"H100 row", "NV18", "NV17", "nvlink4", "H100-SXM", 18, 17, true},
		{"H100 both", "NV18", "NV17", "nvlink4", "H100-SXM", 18, 17, false},
		{"A100 both", "NV12", "NV11", "nvlink3", "A100-SXM4-80GB", 12, 11, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			for j := range 8 {
				fmt.Fprintf(&b, "\tGPU%d", j)
			}
			b.WriteString("\tCPU Affinity\tNUMA Affinity\n")
			for i := range 8 {
				fmt.Fprintf(&b, "GPU%d", i)
				for j := range 8 {
					switch {
					case i == j:
						b.WriteString("\t X ")
					case i == 3 || (j == 3 && !c.rowOnly):
						b.WriteString("\t" + c.less)
					default:
						b.WriteString("\t" + c.full)
					}
				}
				fmt.Fprintf(&b, "\t%d-%d\t%d\n", i/4*52, i/4*52+51, i/4)
			}
			text, tp, err := FromNvidiaSMI("t.txt", []byte(b.String()), SMIOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := tp.Machine.GPUs[0].Model; got != c.model {
				t.Errorf("model %s, want %s", got, c.model)
			}
			for i := range 8 {
				k := c.fullN
				if i == 3 {
					k = c.lessN
				}
				want := fmt.Sprintf("{ends: [gpu%d, nvswitch], type: %s, count: %d}", i, c.gen, k)
				if !strings.Contains(text, want) {
					t.Errorf("no %q in\n%s", want, text)
				}
			}
			if want := fmt.Sprintf("# - GPU3 shows %s where others show %s", c.less, c.full); !strings.Contains(text, want) {
				t.Errorf("no comment %q in\n%s", want, text)
			}
			m := tp.Machine
			copyTime := func(dst int) float64 {
				p := &sim.Program{Name: "c", Streams: []sim.Stream{{GPU: 0, Name: "s"}}, Threads: []sim.Thread{{Name: "t", Host: 0,
					Ops: []sim.Op{{ID: "c", Kind: sim.OpCopy, Stream: 0, Src: m.GPUs[0].Node, Dst: m.GPUs[dst].Node, Bytes: 1 << 30}}}}}
				res, err := sim.Run(m, p)
				if err != nil {
					t.Fatal(err)
				}
				return float64(res.Ops[0].End - res.Ops[0].Start)
			}
			// The copies' fixed latency (microseconds against milliseconds)
			// moves the ratio by less than 1e-4.
			if r, want := copyTime(3)/copyTime(5), float64(c.fullN)/float64(c.lessN); r < want*(1-1e-4) || r > want*(1+1e-4) {
				t.Errorf("copy to gpu3 / to gpu5: %.5f, want %.5f", r, want)
			}
		})
	}
	// Counts that differ between two GPUs joined directly are not a
	// GPU with a link down: the table must be symmetric there, and says
	// so before it asks for the GPU model (it asked for --gpu first).
	for _, opt := range []SMIOptions{{GPU: "H100-SXM"}, {}} {
		_, _, err := FromNvidiaSMI("t.txt", []byte("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV3\t X \n"), opt)
		if want := "t.txt:2:10: GPU0 to GPU1 is NV4 but GPU1 to GPU0 is NV3: the table must be symmetric"; err == nil || err.Error() != want {
			t.Errorf("--gpu %q: error %v, want %q", opt.GPU, err, want)
		}
	}
}
