package mirror

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"gpusim/models"
	"gpusim/sim"
	"gpusim/topologies"
)

// TestAccuracyReport regenerates docs/accuracy.md and fails when the
// committed file is stale, when any figure's error passes its bound, or
// when the median error over large messages passes the stated bound.
func TestAccuracyReport(t *testing.T) {
	rep, err := Accuracy(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range rep.CheckBounds() {
		t.Error(msg)
	}
	if m := rep.LargeMedianError(); !(m < MedianErrorBound) {
		t.Errorf("median error over large messages %.1f%%, bound %.0f%%", 100*m, 100*MedianErrorBound)
	}
	var buf bytes.Buffer
	rep.WriteMarkdown(&buf)
	committed, err := os.ReadFile("../docs/accuracy.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, buf.Bytes()) {
		t.Error("docs/accuracy.md is stale: run go run ./cmd/gpusim accuracy > docs/accuracy.md")
	}
	if len(rep.Rows) < 40 {
		t.Errorf("only %d reference figures", len(rep.Rows))
	}
	// The README quotes the median; it goes stale with the report.
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("median error over large messages: %.1f%%)", 100*rep.LargeMedianError()); !bytes.Contains(readme, []byte(want)) {
		t.Errorf("README.md does not say %q", want)
	}
}

// A toy machine: one host, two GPUs on one PCIe switch with P2P, links given
// by numbers so that every expected figure is computed by hand.
const toy = `
name: toy
hosts: [{name: cpu0, api_overhead: 3 us, memory_bandwidth: 1000 GB/s, staging_handoff: 0 us}]
gpus:
  - {name: gpu0, model: H100-SXM, copy_overhead: 0 us, memory_bandwidth: 1000 GB/s, memory_efficiency: 1}
  - {name: gpu1, model: H100-SXM, copy_overhead: 0 us, memory_bandwidth: 1000 GB/s, memory_efficiency: 1}
switches: [{name: sw0}]
links:
  - {ends: [gpu0, sw0], bandwidth: 20 GB/s, sm_bandwidth: 16 GB/s}
  - {ends: [gpu1, sw0], bandwidth: 20 GB/s, sm_bandwidth: 16 GB/s}
  - {ends: [sw0, cpu0], bandwidth: 10 GB/s, sm_bandwidth: 8 GB/s, latency: 1 us}
`

func loadToy(t *testing.T) *topologies.Topology {
	t.Helper()
	tp, err := topologies.Load("toy.yaml", []byte(toy))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestNVBandwidthOnAToyMachine(t *testing.T) {
	tp := loadToy(t)
	m := tp.Machine
	tol := 1e-6
	check := func(test string, r, c int, want float64) {
		t.Helper()
		ms, err := NVBandwidth(m, test, 64<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := ms[0].Cells[r][c]
		if v == nil || math.Abs(*v-want) > tol*want {
			t.Errorf("%s[%d][%d] = %v, want %g", test, r, c, v, want)
		}
	}
	// 16 copies of 64 MiB, each paying the route's 1 us latency, at the
	// 10 GB/s uplink.
	per := float64(64<<20) / 10e9
	check("host_to_device_memcpy_ce", 0, 1, float64(16*(64<<20))/(16*(per+1e-6))/1e9)
	// Peer copies: 64 MiB at 20 GB/s, no latency.
	check("device_to_device_memcpy_write_ce", 0, 1, 20)
	// All to host: gpu1 copies twice the size at once; both share the
	// 10 GB/s uplink, 5 each, until gpu0's 16 copies end (to within the
	// microseconds when one copy waits its latency and the other runs alone).
	tol = 1e-4
	check("all_to_host_memcpy_ce", 0, 0, float64(16*(64<<20))/(16*(float64(64<<20)/5e9+1e-6))/1e9)
	tol = 1e-6
	ms, _ := NVBandwidth(m, "device_to_device_memcpy_read_ce", 64<<20, nil)
	if ms[0].Cells[0][0] != nil {
		t.Error("the diagonal of a device-to-device test should be N/A")
	}
	// Pointer chase to the host: out and back over the 1 us uplink.
	check("host_device_latency_sm", 0, 0, 2000)
	if _, err := NVBandwidth(m, "nope", 1, nil); err == nil || !strings.Contains(err.Error(), "host_to_device_memcpy_ce") {
		t.Errorf("unknown test: %v", err)
	}
}

func TestP2PTestOnAToyMachine(t *testing.T) {
	tp := loadToy(t)
	ms, err := P2PTest(tp.Machine, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string, r, c int) float64 {
		for _, m := range ms {
			if m.Name == name {
				return *m.Cells[r][c]
			}
		}
		t.Fatalf("no matrix %s", name)
		return 0
	}
	// P2P: 20 GB/s. Disabled: staged through cpu0 in 2 MiB chunks over two
	// buffers, each leg at the 10 GB/s uplink in its own direction with 1 us of
	// latency: the two legs pipeline, ~10 GB/s. Diagonal: read and write at
	// the 1000 GB/s memory, counted twice: 1000.
	if v := get("unidirectional_p2p_enabled", 0, 1); math.Abs(v-20) > 1e-6 {
		t.Errorf("P2P enabled %g, want 20", v)
	}
	chunk := float64(2 << 20)
	legs := chunk/10e9 + 1e-6
	n := math.Ceil(160e6 / chunk)
	staged := 5 * 160e6 / (5 * (n + 1) * legs) / 1e9
	if v := get("unidirectional_p2p_disabled", 0, 1); math.Abs(v-staged) > 0.02*staged {
		t.Errorf("P2P disabled %g, want about %g", v, staged)
	}
	if v := get("unidirectional_p2p_enabled", 1, 1); math.Abs(v-1000) > 1e-3 {
		t.Errorf("diagonal %g, want 1000", v)
	}
	// Bidirectional P2P: both directions at 20, counted together.
	if v := get("bidirectional_p2p_enabled", 0, 1); math.Abs(v-40) > 1e-6 {
		t.Errorf("bidirectional %g, want 40", v)
	}
	// CPU latency is the API overhead.
	if v := get("latency_p2p_enabled_cpu", 0, 1); math.Abs(v-3) > 1e-9 {
		t.Errorf("CPU latency %g, want 3", v)
	}
}

func TestNCCLTestsFormulas(t *testing.T) {
	for _, tc := range []struct {
		op   string
		n    int
		want float64
	}{{"all_reduce", 8, 1.75}, {"all_gather", 4, 0.75}, {"reduce_scatter", 2, 0.5}, {"broadcast", 8, 1}, {"reduce", 8, 1}, {"alltoall", 8, 0.875}, {"sendrecv", 8, 1}} {
		if got := busFactor(tc.op, tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("busFactor(%s, %d) = %g, want %g", tc.op, tc.n, got, tc.want)
		}
	}
	sizes := NCCLTestsConfig{MinBytes: 8, MaxBytes: 64, Factor: 2}.Sizes()
	if len(sizes) != 4 || sizes[0] != 8 || sizes[3] != 64 {
		t.Errorf("sizes %v", sizes)
	}
	// On the toy's two GPUs a large ring all-reduce is bound by the 16 GB/s
	// kernel-driven links: busbw approaches 16.
	tp := loadToy(t)
	rows, err := NCCLTests(tp, NCCLTestsConfig{Op: "all_reduce", MinBytes: 1 << 30, MaxBytes: 1 << 30, Factor: 2, Protocol: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	if bus := rows[0].BusBW; bus > 16 || bus < 15.9 {
		t.Errorf("busbw %g, want just under 16", bus)
	}
	if rows[0].Count != (1<<30)/4 {
		t.Errorf("count %d, want %d floats", rows[0].Count, (1<<30)/4)
	}
	if r := rows[0]; r.InPlaceTime != r.Time || r.InPlaceBusBW != r.BusBW {
		t.Errorf("two ranks: in place %s, %g GB/s; out of place %s, %g: want the same", r.InPlaceTime, r.InPlaceBusBW, r.Time, r.BusBW)
	}
	// One rank in place: NCCL discards the call, but the host still
	// makes it (3 us, the toy's API overhead); the 20 timed calls take
	// that each and what the sync after them does. Out of place each
	// call also copies the buffer within the GPU (cudaMemcpyAsync): 1 MiB
	// read and written takes the GPU less than a call, so only the last
	// copy adds to the calls, a twentieth of it a call.
	one, err := NCCLTests(tp, NCCLTestsConfig{Op: "all_reduce", GPUs: 1, MinBytes: 1 << 20, MaxBytes: 1 << 20, Factor: 2})
	if err != nil {
		t.Fatal(err)
	}
	sync := timeSync(t, tp)
	if r := one[0]; r.InPlaceTime != 3*sim.Microsecond+sync/20 || r.Time <= r.InPlaceTime || r.Time > r.InPlaceTime+3*sim.Microsecond/20 {
		t.Errorf("one rank: in place %s, out of place %s; want %s (a call, and a sync over 20) and at most a twentieth of a call more", r.InPlaceTime, r.Time, 3*sim.Microsecond+sync/20)
	}
	if _, err := NCCLTests(tp, NCCLTestsConfig{Op: "all_reduce", GPUs: 3, MinBytes: 8, MaxBytes: 8}); err == nil {
		t.Error("3 GPUs on a 2-GPU topology accepted")
	}
	_ = models.AllReduce
}

// Two GPUs that cannot reach each other (no link between their hosts) are
// named in one error, before any copy is timed.
func TestP2PTestRefusesGPUsThatCannotMeet(t *testing.T) {
	tp, err := topologies.Load("split.yaml", []byte(`name: split
hosts: [{name: cpu0}, {name: cpu1}]
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu1}
links:
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu1], type: pcie5x16}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = P2PTest(tp.Machine, nil)
	want := "gpu0 and gpu1 cannot reach each other: no route, and no host reachable from both; the sample copies between every pair of GPUs"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestP2PTestWithoutAStagingHost: two GPUs, each on its own host, joined
// by NVLink only (as two Graces' GPUs of a GB200 rack): peer copies run,
// but without peer access no host reaches both, so the P2P=Disabled cells
// between them are N/A rather than a deadlock.
func TestP2PTestWithoutAStagingHost(t *testing.T) {
	tp, err := topologies.Load("graces.yaml", []byte(`name: graces
hosts: [{name: cpu0}, {name: cpu1}]
gpus:
  - {name: gpu0, model: B200, host: cpu0}
  - {name: gpu1, model: B200, host: cpu1}
links:
  - {ends: [gpu0, cpu0], type: nvlink-c2c}
  - {ends: [gpu1, cpu1], type: nvlink-c2c}
  - {ends: [gpu0, gpu1], type: nvlink5, count: 18}
`))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := P2PTest(tp.Machine, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mx := range ms {
		disabled := strings.Contains(mx.Name, "disabled")
		for i := range 2 {
			for j := range 2 {
				if v := mx.Cells[i][j]; (v == nil) != (disabled && i != j) {
					t.Errorf("%s[%d][%d] = %v: want N/A exactly for P2P=Disabled between the two", mx.Name, i, j, v)
				}
			}
		}
	}
}

// nccl-tests prints its average bus bandwidth with C's %g: 6 significant
// digits (methods.md §4).
func TestNCCLTestsAverageIsPrintedWithCsG(t *testing.T) {
	tp := loadToy(t)
	for _, tc := range []struct {
		bus  []float64
		want string
	}{
		{[]float64{100.1, 228.5194}, "164.31"}, // (100.1 + 228.5194) / 2 = 164.3097
		{[]float64{1234567}, "1.23457e+06"},
		{[]float64{0.0001234567}, "0.000123457"},
		{[]float64{480}, "480"},
		{nil, "0"},
	} {
		var rows []NCCLRow
		for _, b := range tc.bus {
			rows = append(rows, NCCLRow{Size: 8, Count: 2, BusBW: b, InPlaceBusBW: b})
		}
		var buf bytes.Buffer
		WriteNCCLTests(&buf, tp, NCCLTestsConfig{Op: "all_reduce", MinBytes: 8, MaxBytes: 8, Factor: 2}, rows)
		want := "# Avg bus bandwidth    : " + tc.want + " \n"
		if !strings.Contains(buf.String(), want) {
			t.Errorf("bus bandwidths %v: want the line %q in\n%s", tc.bus, want, buf.String())
		}
	}
}

// More than 8 GPUs from one process (a server holds at most 8): the
// header says one thread's launches set the small sizes' time, and how to
// run a process a GPU; with 8, or with --procs, it does not.
func TestNCCLTestsSaysOneThreadLaunchesMany(t *testing.T) {
	tp := loadToy(t)
	const hint = "# one thread launches on all 9 GPUs in turn: the host's launches set the small sizes' time; --procs 9 runs a process a GPU, as mpirun -np 9 does\n"
	for _, tc := range []struct {
		gpus, procs int
		want        bool
	}{{9, 1, true}, {8, 1, false}, {9, 9, false}} {
		var buf bytes.Buffer
		WriteNCCLTests(&buf, tp, NCCLTestsConfig{Op: "all_reduce", MinBytes: 8, MaxBytes: 8, Factor: 2, GPUs: tc.gpus, Procs: tc.procs}, nil)
		if got := strings.Contains(buf.String(), "# one thread launches"); got != tc.want || tc.want && !strings.Contains(buf.String(), hint) {
			t.Errorf("%d GPUs in %d processes: hint %v, want %v:\n%s", tc.gpus, tc.procs, got, tc.want, buf.String())
		}
	}
}

// p2p-test prints what the CUDA sample prints: the connectivity matrix
// ("     D\D" and "%6d" per column, each row "%6d\t" then "%6d" per cell), then
// each matrix with "   D\D" (or "   GPU", "   CPU") and "%6d " per column
// over rows of "%6d " and "%6.02f " per cell, as measured.md's pasted
// outputs show them (trailing spaces dropped).
func TestP2PTestLayout(t *testing.T) {
	// The toy's switch does not forward P2P: the GPUs cannot access each
	// other's memory, and copies between them are staged through cpu0.
	tp, err := topologies.Load("toy.yaml", []byte(strings.Replace(toy, "switches: [{name: sw0}]", "switches: [{name: sw0, p2p: false}]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := P2PTest(tp.Machine, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteP2P(&buf, ms)
	lines := strings.Split(buf.String(), "\n")
	want := []string{
		"P2P Connectivity Matrix",
		`     D\D     0     1`,
		"     0\t     1     0",
		"     1\t     0     1",
		"Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
		`   D\D     0      1`,
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("line %d: got %q, want %q; output:\n%s", i+1, lines[min(i, len(lines)-1)], w, buf.String())
		}
	}
	// Row 0 of the first matrix: "     0", then each cell in 6 columns after
	// a space; the diagonal is a copy within gpu0 at its 1000 GB/s memory,
	// read and write counted: 1000.00.
	if !strings.HasPrefix(lines[6], "     0 1000.00 ") {
		t.Errorf("first row %q, want it to start with %q", lines[6], "     0 1000.00 ")
	}
	for _, h := range []string{"   GPU     0      1", "   CPU     0      1"} {
		if !strings.Contains(buf.String(), "\n"+h+"\n") {
			t.Errorf("no latency header %q in\n%s", h, buf.String())
		}
	}
}

// nvbandwidth's -t takes a test's name or its index in nvbandwidth's list
// (methods.md §5: 0 host_to_device_memcpy_ce, ..., 34 device_local_copy).
func TestNVBandwidthTestsByIndex(t *testing.T) {
	for arg, want := range map[string]string{
		"0":                        "host_to_device_memcpy_ce",
		"1":                        "device_to_host_memcpy_ce",
		"4":                        "device_to_device_memcpy_read_ce",
		"7":                        "device_to_device_bidirectional_memcpy_write_ce",
		"8":                        "all_to_host_memcpy_ce",
		"10":                       "host_to_all_memcpy_ce",
		"32":                       "host_device_latency_sm",
		"33":                       "device_to_device_latency_sm",
		"device_to_host_memcpy_ce": "device_to_host_memcpy_ce",
	} {
		if got, err := NVBandwidthTestName(arg); err != nil || got != want {
			t.Errorf("-t %s: got %q, %v; want %s", arg, got, err, want)
		}
	}
	for arg, want := range map[string]string{
		"9":                        "test 9 is all_to_host_bidirectional_memcpy_ce, which gpusim does not mirror",
		"16":                       "test 16 is host_to_device_memcpy_sm, which gpusim does not mirror",
		"35":                       "no test has index 35: nvbandwidth's tests are numbered 0 to 34",
		"-1":                       "no test has index -1",
		"host_to_device_memcpy_sm": "test host_to_device_memcpy_sm is not mirrored by gpusim",
		"fastest_copy":             `unknown test "fastest_copy"`,
	} {
		if _, err := NVBandwidthTestName(arg); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("-t %s: got %v, want an error starting %q", arg, err, want)
		}
	}
	// NVBandwidth itself takes an index and names the matrix by the test.
	ms, err := NVBandwidth(loadToy(t).Machine, "5", 64<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].Name != "device_to_device_memcpy_write_ce" {
		t.Errorf("test 5 ran %s, want device_to_device_memcpy_write_ce", ms[0].Name)
	}
}

// The stream is held until the host has enqueued every copy, however slow
// the calls: the toy without P2P with one core for the two threads of the
// bidirectional test and a 100 ms staging setup per call gives the
// bandwidths and GPU latencies it gives with a core per thread and no
// setup (the host's enqueue is never timed), and a CPU latency of the API
// overhead plus the setup, 100.003 ms (one thread, the latency test).
func TestP2PTestTimesTheGPUsNotTheEnqueue(t *testing.T) {
	noP2P := strings.Replace(toy, "switches: [{name: sw0}]", "switches: [{name: sw0, p2p: false}]", 1)
	run := func(host string) map[string]*Matrix {
		tp, err := topologies.Load("toy.yaml", []byte(strings.Replace(noP2P, "staging_handoff: 0 us}", host, 1)))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := P2PTest(tp.Machine, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*Matrix{}
		for _, m := range ms {
			out[m.Name] = m
		}
		return out
	}
	fast := run("staging_handoff: 0 us, staging_setup: 0 us}")
	slow := run("staging_handoff: 0 us, staging_setup: 100 ms, cores: 1}")
	for _, name := range []string{"unidirectional_p2p_disabled", "bidirectional_p2p_disabled", "latency_p2p_disabled_gpu"} {
		if f, s := *fast[name].Cells[0][1], *slow[name].Cells[0][1]; math.Abs(f-s) > 1e-9*f {
			t.Errorf("%s: %g with a slow enqueue, %g without", name, s, f)
		}
	}
	if got, want := *slow["latency_p2p_disabled_cpu"].Cells[0][1], 100_003.0; math.Abs(got-want) > 1e-6 {
		t.Errorf("CPU latency %g us, want %g", got, want)
	}
}

// Under mpirun -np P each process launches only its own GPUs' calls, from a
// thread on its first GPU's host: here 100 us a call on cpu0 (gpu0, gpu1)
// and 60 us on cpu1 (gpu2, gpu3). An 8-byte all-reduce takes the GPUs c =
// 10.2 us (an LL ring over 4 ranks: 6.6 + 6 x 0.6 us), so the loop is bound
// by the hosts; each process times from its first timed call to the end of
// its last stream sync, and the mean over processes is printed.
//   - One process (on cpu0): 20 iterations of 4 calls, then 4 syncs (the
//     last collective ends during the first): 21 x 4 x 100 us over 20.
//   - Two: the collectives wait for cpu0's process (2 calls, 200 us, an
//     iteration); the other runs ahead and waits in its sync, its window
//     starting and ending as much earlier: both 20 x 200 + 2 x 100 us.
//   - Four: cpu0's processes 20 x 100 + 100 us; cpu1's start 120 us in
//     (warm-up call and sync, the warm-up collective over at 100 + c) and
//     end when they see the last collective end (5 us of sync latency
//     after it), 200 + 20 x 100 + c + 5. (With two processes the one on
//     cpu1 also sees its warm-up 5 us late: its window moves, not its
//     length.)
func TestNCCLTestsProcessesShareTheLaunches(t *testing.T) {
	tp, err := topologies.Load("four.yaml", []byte(`
name: four
hosts: [{name: cpu0, api_overhead: 100 us, sync_latency: 5 us}, {name: cpu1, api_overhead: 60 us, sync_latency: 5 us}]
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu0}
  - {name: gpu2, model: H100-SXM, host: cpu1}
  - {name: gpu3, model: H100-SXM, host: cpu1}
switches: [{name: nvs, kind: nvswitch}]
links:
  - {ends: [gpu0, nvs], type: nvlink4, count: 18}
  - {ends: [gpu1, nvs], type: nvlink4, count: 18}
  - {ends: [gpu2, nvs], type: nvlink4, count: 18}
  - {ends: [gpu3, nvs], type: nvlink4, count: 18}
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
  - {ends: [gpu2, cpu1], type: pcie5x16}
  - {ends: [gpu3, cpu1], type: pcie5x16}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		procs int
		want  float64 // us
	}{
		{1, 21 * 4 * 100.0 / 20},
		{2, (20*200 + 2*100.0) / 20},
		{4, (2*(20*100+100.0) + 2*(200+20*100+10.2+5-120)) / 4 / 20},
	} {
		rows, err := NCCLTests(tp, NCCLTestsConfig{Op: "all_reduce", Procs: c.procs, MinBytes: 8, MaxBytes: 8, Factor: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := rows[0].Time.Seconds() * 1e6; math.Abs(got-c.want) > 1e-3 {
			t.Errorf("%d processes: %.4f us, want %.4f", c.procs, got, c.want)
		}
	}
	if _, err := NCCLTests(tp, NCCLTestsConfig{Op: "all_reduce", Procs: 3, MinBytes: 8, MaxBytes: 8, Factor: 2}); err == nil || !strings.HasSuffix(err.Error(), "3 processes cannot share 4 GPUs evenly, each process driving as many; give --procs 1, 2, 4, or -g, the GPUs of each process (nccl-tests' -g)") {
		t.Errorf("3 processes on 4 GPUs: %v", err)
	}
}

// timeSync is what a stream sync of an idle stream costs the host on the
// toy's first GPU.
func timeSync(t *testing.T, tp *topologies.Topology) sim.Time {
	t.Helper()
	b := newBuilder(tp.Machine, "sync")
	st := b.stream(0, 0)
	th := b.thread(tp.Machine.GPUs[0].Host)
	id := b.add(th, sim.Op{Kind: sim.OpSync, Sync: sim.SyncStream, Stream: st})
	recs, _, err := b.run()
	if err != nil {
		t.Fatal(err)
	}
	return recs[id].End - recs[id].Call
}

// backwardsAtOnce is an Each that starts every call at once, the last
// first.
func backwardsAtOnce(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// TestCellsAreTheSameHoweverTheyRun runs p2p-test and an nvbandwidth test,
// whose cells are independent simulations (batch), one after another and
// all at once in reverse: every cell must be the same, and equal to the
// cell measured alone.
func TestCellsAreTheSameHoweverTheyRun(t *testing.T) {
	m := loadToy(t).Machine
	print := func(each Each) string {
		var b bytes.Buffer
		ms, err := P2PTest(m, each)
		if err != nil {
			t.Fatal(err)
		}
		WriteP2P(&b, ms)
		nv, err := NVBandwidth(m, "device_to_device_bidirectional_memcpy_read_ce", 64<<20, each)
		if err != nil {
			t.Fatal(err)
		}
		for _, mx := range nv {
			WriteMatrix(&b, mx)
		}
		return b.String()
	}
	one, four := print(nil), print(backwardsAtOnce)
	if one != four {
		t.Errorf("p2p-test one cell after another:\n%s\nall at once, last first:\n%s", one, four)
	}
	// A cell measured alone, as the tools measured before batching: the
	// bidirectional read between gpu0 and gpu1, row 0 column 1.
	nv, _ := NVBandwidth(m, "device_to_device_bidirectional_memcpy_read_ce", 64<<20, backwardsAtOnce)
	node := func(i int) int { return m.GPUs[i].Node }
	a := copySpec{src: node(1), dst: node(0), gpu: 0, bytes: 64 << 20, repeat: nvbLoop}
	c := copySpec{src: node(0), dst: node(1), gpu: 1, bytes: 64 << 20, repeat: nvbLoop}
	ts, _, err := timeCopiesAndCalls(m, []copySpec{a, c})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *nv[0].Cells[0][1], gbps(float64(64<<20)*nvbLoop, ts[0]); got != want {
		t.Errorf("read1[0][1] = %g in the batch, %g alone", got, want)
	}
}

// TestBatchReportsTheFirstErrorInOrder queues a good job and two failing
// ones: the error is the second job's whichever ends first, and only the
// good job is handed its times.
func TestBatchReportsTheFirstErrorInOrder(t *testing.T) {
	m := loadToy(t).Machine
	node := func(i int) int { return m.GPUs[i].Node }
	for range 20 {
		b := &batch{m: m, each: backwardsAtOnce}
		called := 0
		done := func(_, _ []sim.Time) { called++ }
		b.add([]copySpec{{src: node(0), dst: node(1), gpu: 0, bytes: 1 << 20, repeat: 1}}, done)
		b.add([]copySpec{{src: node(0), dst: node(1), gpu: 0, bytes: -1, repeat: 1}}, done)
		b.add([]copySpec{{src: node(0), dst: node(1), gpu: 0, bytes: 1 << 20, repeat: 1, noPeer: true}, {src: node(0), dst: node(1), gpu: 0, bytes: -2, repeat: 1}}, done)
		err := b.run()
		// Each job numbers its ops from 1, a latch before each copy: the
		// second job's bad copy is op2, the third's op4.
		if err == nil || !strings.Contains(err.Error(), "op op2:") {
			t.Fatalf("error %v, want the second job's (op op2)", err)
		}
		if called != 1 {
			t.Fatalf("%d jobs handed their times, want 1: only the good one", called)
		}
	}
}

// JSON numbers: 6 significant digits and at least 2 decimals, never an
// exponent above 1.
func TestJSONNumbers(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 0.000343421234: "0.000343421", 1739307.123: "1739307.12", 4011577.64: "4011577.64",
		26.14621: "26.1462", 104.585: "104.585", 393: "393", 12.5: "12.5", 1e-7: "1e-07",
	} {
		if got := fnum(v); got != want {
			t.Errorf("fnum(%v) = %s, want %s", v, got, want)
		}
	}
}
