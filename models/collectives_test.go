package models_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"gpusim/models"
	"gpusim/sim"
	"gpusim/topologies"
)

// Two H100s on an NVSwitch with in-switch reduction, each by one NVLink of
// 100 GB/s that kernels drive at 80 GB/s, with no link latency and memory
// too fast to matter: every expected time below follows from these numbers
// and NCCL's tables (methods.md §1.1) by hand.
const twoOnNVSwitch = `
name: two-on-nvswitch
hosts: [{name: cpu0}]
gpus:
  - {name: gpu0, model: H100-SXM, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}
  - {name: gpu1, model: H100-SXM, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}
switches: [{name: nvs, kind: nvswitch, nvls: true}]
links:
  - {ends: [gpu0, nvs], kind: nvlink, bandwidth: 100 GB/s, sm_bandwidth: 80 GB/s}
  - {ends: [gpu1, nvs], kind: nvlink, bandwidth: 100 GB/s, sm_bandwidth: 80 GB/s}
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
`

// collectiveTime runs one collective alone and returns the time from the
// moment every rank's part has begun to the end of the last part.
func collectiveTime(t *testing.T, tp *topologies.Topology, spec models.CollSpec) sim.Time {
	return collectiveBeside(t, tp, spec, 0)
}

// collectiveBeside runs one collective beside a kernel of the given
// duration that claims all of the first rank's SMs (none: no kernel), and
// returns the time from the moment every rank's part has begun to the end
// of the last part.
func collectiveBeside(t *testing.T, tp *topologies.Topology, spec models.CollSpec, kernel sim.Time) sim.Time {
	t.Helper()
	m := tp.Machine
	plan, err := models.BuildCollective(m, tp.GPUModels, spec)
	if err != nil {
		t.Fatal(err)
	}
	p := &sim.Program{Name: "one collective", Threads: []sim.Thread{{Name: "main", Host: m.GPUs[spec.GPUs[0]].Host}}}
	var streams []int
	for _, g := range spec.GPUs {
		p.Streams = append(p.Streams, sim.Stream{GPU: g, Name: "comm"})
		streams = append(streams, len(p.Streams)-1)
	}
	if kernel > 0 {
		p.Streams = append(p.Streams, sim.Stream{GPU: spec.GPUs[0], Name: "compute"})
		p.Threads[0].Ops = append(p.Threads[0].Ops, sim.Op{ID: "k", Kind: sim.OpKernel, Stream: len(p.Streams) - 1, Duration: kernel, SMShare: 1})
	}
	p.Threads[0].Ops = append(p.Threads[0].Ops, sim.Op{ID: "c", Kind: sim.OpCollective, Coll: plan, Streams: streams, Stream: streams[0]})
	res, err := sim.Run(m, p)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := sim.MaxTime, sim.Time(0)
	for _, r := range res.Ops {
		if r.Coll != nil {
			begin, end = min(begin, r.Begin), max(end, r.End)
		}
	}
	return end - begin
}

// Each channel is one SM block driving one ring (methods.md §1.2: busBw =
// nChannels x per-channel bandwidth), so fewer channels than the default
// (24 over NVLink; 16 for NVLS on Hopper) move proportionally less, for
// every algorithm and protocol, and more add nothing.
func TestChannelsLimitBandwidth(t *testing.T) {
	tp, err := topologies.Load("two-on-nvswitch.yaml", []byte(twoOnNVSwitch))
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 30
	us := 1e-6
	// Ring all-reduce of 2 ranks: 2 steps of size/2 each, one after the
	// other, each after its hop latency; the plan starts after the base
	// latency. Simple: 8.4 + 2 x 3.4 us; LL128: 14 + 2 x 1.9 us, at 0.92 of
	// the links (its wire overhead) and at most 36.7 GB/s per search channel
	// (half the channels, at least 1).
	ringSimple := func(rate float64) float64 { return 15.2*us + size/rate }
	ringLL128 := func(rate float64) float64 { return 17.8*us + size/rate }
	// NVLS: 256 chunks of 4 MiB, each up into the switch and down again, the
	// next chunk's way up overlapping this one's way down: 257 chunk times
	// at 0.74 of the links, after 25 us.
	nvls := func(rate float64) float64 { return 25*us + 257*(size/256)/rate }
	// Tree (a chain of 2 within a node): the same 257 chunk times, the first
	// chunk paying 4 us up and 4 us down, after 8.4 us; the rate is half of
	// min(0.92 x the bus bandwidth, 38.7 GB/s per search channel), times
	// NCCL's tree correction (1 at 1 GiB).
	tree := func(rate float64) float64 { return 16.4*us + 257*(size/256)/rate }
	for _, tc := range []struct {
		algo, proto string
		channels    int
		want        float64 // seconds
	}{
		{"ring", "simple", 0, ringSimple(80e9)},
		{"ring", "simple", 24, ringSimple(80e9)},
		{"ring", "simple", 48, ringSimple(80e9)},
		{"ring", "simple", 6, ringSimple(80e9 * 6 / 24)},
		{"ring", "simple", 1, ringSimple(80e9 / 24)},
		{"ring", "ll128", 0, ringLL128(80e9 * 0.92)},
		{"ring", "ll128", 6, ringLL128(80e9 * 6 / 24 * 0.92)},           // 18.4 < 3 x 36.7
		{"ring", "ll128", 1, ringLL128(math.Min(80e9/24*0.92, 36.7e9))}, // 3.07 GB/s
		{"nvls", "simple", 0, nvls(80e9 * 0.74)},
		{"nvls", "simple", 16, nvls(80e9 * 0.74)},
		{"nvls", "simple", 8, nvls(80e9 * 0.74 * 8 / 16)},
		{"tree", "simple", 0, tree(0.5 * 0.92 * 80e9)},
		{"tree", "simple", 6, tree(0.5 * 0.92 * 80e9 * 6 / 24)},
	} {
		spec := models.CollSpec{Kind: models.AllReduce, GPUs: []int{0, 1}, Bytes: size, Algorithm: tc.algo, Protocol: tc.proto, Channels: tc.channels}
		got := collectiveTime(t, tp, spec).Seconds()
		if math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s/%s with %d channels: %.6g s, want %.6g s", tc.algo, tc.proto, tc.channels, got, tc.want)
		}
	}
}

// On a shipped machine, no collective gets faster with fewer channels than
// the default, alone or beside a 5 ms kernel that fewer channels slow down
// less (they claim fewer SMs). (More channels than the default claim more
// SMs for no more bandwidth: beside a kernel they are slower.)
func TestFewerChannelsAreNeverFaster(t *testing.T) {
	tp, err := topologies.LoadShipped("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	gpus := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, kernel := range []sim.Time{0, 5 * sim.Millisecond} {
		for _, kind := range models.Collectives {
			for _, algo := range []string{"auto", "ring"} {
				if kind == models.AllToAll && algo == "ring" {
					continue
				}
				var prev sim.Time
				// NVLS (all-reduce's auto here) runs at full rate from
				// 16 channels and claims no more SMs beyond them.
				for i, ch := range []int{24, 16, 8, 2, 1} {
					got := collectiveBeside(t, tp, models.CollSpec{Kind: kind, GPUs: gpus, Bytes: 256 << 20, Algorithm: algo, Channels: ch}, kernel)
					if i > 0 && got < prev {
						t.Errorf("%s/%s beside a %v kernel: %d channels take %v, less than the %v of more channels", kind, algo, kernel, ch, got, prev)
					}
					prev = got
				}
			}
		}
	}
}

// A collective's kernels claim an SM per channel: NCCL over NVLink runs 24
// channels, so a ring all-reduce on a DGX H100 (132 SMs per GPU) claims
// 24/132 of them; NVLS runs on at most 16 (nvlsChannels), so an NVLS
// all-reduce claims 16/132 by default and with more channels asked for, and
// 8/132 with 8.
func TestCollectiveSMShareFollowsItsChannels(t *testing.T) {
	tp, err := topologies.LoadShipped("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	gpus := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, c := range []struct {
		algo  string
		chans int
		want  float64
	}{
		{"ring", 0, 24.0 / 132}, {"ring", 8, 8.0 / 132},
		{"nvls", 0, 16.0 / 132}, {"nvls", 24, 16.0 / 132}, {"nvls", 8, 8.0 / 132},
	} {
		plan, err := models.BuildCollective(tp.Machine, tp.GPUModels, models.CollSpec{Kind: models.AllReduce, GPUs: gpus, Bytes: 1 << 30, Algorithm: c.algo, Channels: c.chans})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Algorithm != c.algo || math.Abs(plan.SMShare-c.want) > 1e-12 {
			t.Errorf("%s with %d channels: %s claiming %g of the SMs, want %s claiming %g", c.algo, c.chans, plan.Algorithm, plan.SMShare, c.algo, c.want)
		}
	}
}

// NCCL picks its per-architecture limits by the lowest compute capability
// in the communicator (methods.md §1.1): on two B200s the Blackwell row
// (LL 282 GB/s; per search channel LL128 ring 40, tree 70, tree LL128 55.6
// GB/s; 32 channels, 16 searched; NVLS on 24 channels at NCCL's
// Blackwell/Hopper efficiency ratio 0.74/0.85 times the Hopper fit 0.74);
// with one H100 among them, Hopper's (141; 36.7, 38.7, 36.7; 24 channels,
// 12 searched; NVLS on 16 channels at 0.74). Links of 2000 GB/s make every
// cap bind; each time follows from these numbers by hand, as in
// TestChannelsLimitBandwidth.
func TestBlackwellUsesItsOwnLimits(t *testing.T) {
	const size = 1 << 30
	us := 1e-6
	pair := func(a, b string) *topologies.Topology {
		tp, err := topologies.Load("pair.yaml", []byte(`
name: pair
hosts: [{name: cpu0}]
gpus:
  - {name: gpu0, model: `+a+`, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}
  - {name: gpu1, model: `+b+`, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}
switches: [{name: nvs, kind: nvswitch, nvls: true}]
links:
  - {ends: [gpu0, nvs], kind: nvlink, bandwidth: 2000 GB/s, sm_bandwidth: 2000 GB/s}
  - {ends: [gpu1, nvs], kind: nvlink, bandwidth: 2000 GB/s, sm_bandwidth: 2000 GB/s}
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
`))
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	// Two ranks: the ring's 2 steps of size/2 after the base latency and 2
	// hop latencies (LL: 6.6 + 2 x 0.6 us; LL128: 14 + 2 x 1.9 us). The
	// tree's 257 chunk times after its base latency and a hop up and down
	// (Simple: 8.4 + 2 x 4 us; LL128: 14 + 2 x 1.25 us), at half the capped
	// bus bandwidth (LL128: 7/9 of the tree's cap, under LL128's own;
	// NCCL applies them in that order, methods.md §1.2).
	ringLL := func(rate float64) float64 { return 7.8*us + size/rate }
	ringLL128 := func(rate float64) float64 { return 17.8*us + size/rate }
	tree := func(rate float64) float64 { return 16.4*us + 257*(size/256)/rate }
	treeLL128 := func(rate float64) float64 { return 16.5*us + 257*(size/256)/rate }
	nvls := func(rate float64) float64 { return 25*us + 257*(size/256)/rate }
	const link = 2000e9
	bw := 0.74 * 0.74 / 0.85
	for _, tc := range []struct {
		a, b, algo, proto string
		channels          int
		want              float64
		share             float64 // of the SMs of the GPU with fewer
	}{
		{"B200", "B200", "ring", "ll", 0, ringLL(282e9), 32.0 / 148},
		{"B200", "B200", "ring", "ll128", 0, ringLL128(16 * 40e9), 32.0 / 148},
		{"B200", "B200", "ring", "ll128", 24, ringLL128(12 * 40e9), 24.0 / 148},
		{"B200", "B200", "tree", "simple", 0, tree(0.5 * 16 * 70e9), 32.0 / 148},
		// Tree LL128: the tree cap first (16 x 70 GB/s), then 7/9 of it
		// (871 GB/s), under LL128's own cap (16 x 55.6 GB/s).
		{"B200", "B200", "tree", "ll128", 0, treeLL128(0.5 * 16 * 70e9 * 7 / 9), 32.0 / 148},
		{"B200", "B200", "nvls", "simple", 0, nvls(link * bw), 24.0 / 148},
		{"B200", "B200", "nvls", "simple", 16, nvls(link * bw * 16 / 24), 16.0 / 148},
		{"H100-SXM", "B200", "ring", "ll", 0, ringLL(141e9), 24.0 / 132},
		{"H100-SXM", "B200", "ring", "ll128", 0, ringLL128(12 * 36.7e9), 24.0 / 132},
		{"H100-SXM", "B200", "tree", "simple", 0, tree(0.5 * 12 * 38.7e9), 24.0 / 132},
		{"H100-SXM", "B200", "tree", "ll128", 0, treeLL128(0.5 * 12 * 38.7e9 * 7 / 9), 24.0 / 132},
		{"H100-SXM", "B200", "nvls", "simple", 0, nvls(link * 0.74), 16.0 / 132},
		{"H100-SXM", "B200", "nvls", "simple", 16, nvls(link * 0.74), 16.0 / 132},
	} {
		tp := pair(tc.a, tc.b)
		spec := models.CollSpec{Kind: models.AllReduce, GPUs: []int{0, 1}, Bytes: size, Algorithm: tc.algo, Protocol: tc.proto, Channels: tc.channels}
		got := collectiveTime(t, tp, spec).Seconds()
		if math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s+%s %s/%s with %d channels: %.6g s, want %.6g s", tc.a, tc.b, tc.algo, tc.proto, tc.channels, got, tc.want)
		}
		plan, err := models.BuildCollective(tp.Machine, tp.GPUModels, spec)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(plan.SMShare-tc.share) > 1e-12 {
			t.Errorf("%s+%s %s with %d channels: claims %g of the SMs, want %g", tc.a, tc.b, tc.algo, tc.channels, plan.SMShare, tc.share)
		}
	}
}

// TestWhatNCCLDiscards: an empty collective, and one rank in place, are
// plans without tasks (NCCL returns before it enqueues anything); sends
// and receives still meet when empty, and one rank out of place copies its
// buffer.
func TestWhatNCCLDiscards(t *testing.T) {
	tp, err := topologies.Load("two-on-nvswitch.yaml", []byte(twoOnNVSwitch))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec  models.CollSpec
		tasks bool
	}{
		{models.CollSpec{Kind: models.AllReduce, GPUs: []int{0, 1}}, false},
		{models.CollSpec{Kind: models.AllGather, GPUs: []int{0, 1}}, false},
		{models.CollSpec{Kind: models.AllReduce, GPUs: []int{0, 1}, Algorithm: "nvls"}, false},
		{models.CollSpec{Kind: models.Broadcast, GPUs: []int{0, 1}, Root: 1}, false},
		{models.CollSpec{Kind: models.AllReduce, GPUs: []int{1}, Bytes: 1 << 20, InPlace: true}, false},
		{models.CollSpec{Kind: models.ReduceScatter, GPUs: []int{0}, Bytes: 1 << 20, InPlace: true, Algorithm: "nvls"}, false},
		{models.CollSpec{Kind: models.AllReduce, GPUs: []int{1}, Bytes: 1 << 20}, true},
		{models.CollSpec{Kind: models.AllReduce, GPUs: []int{0, 1}, Bytes: 1 << 20, InPlace: true}, true},
		{models.CollSpec{Kind: models.SendRecv, GPUs: []int{0, 1}}, true},
		{models.CollSpec{Kind: models.AllToAll, GPUs: []int{0, 1}}, true},
	} {
		plan, err := models.BuildCollective(tp.Machine, tp.GPUModels, c.spec)
		if err != nil {
			t.Errorf("%+v: %v", c.spec, err)
			continue
		}
		if got := len(plan.Tasks) > 0; got != c.tasks || (got == (plan.Algorithm == "none")) {
			t.Errorf("%+v: %d tasks, algorithm %s; want tasks: %v", c.spec, len(plan.Tasks), plan.Algorithm, c.tasks)
		}
	}
	// A forced algorithm the ranks cannot run is refused at zero bytes as
	// at any other size: two GPUs on PCIe have no NVLS.
	pcie, err := topologies.LoadShipped("pcie-2gpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, bytes := range []int64{0, 1 << 20} {
		if _, err := models.BuildCollective(pcie.Machine, pcie.GPUModels, models.CollSpec{Kind: models.AllReduce, GPUs: []int{0, 1}, Bytes: bytes, Algorithm: "nvls"}); err == nil {
			t.Errorf("nvls over PCIe, %d bytes: accepted", bytes)
		}
	}
}

// An NVLS all-reduce's plan grows with ranks x chunks, not ranks^2 x
// chunks: each chunk's downs wait for its ups through one join. On the
// GB200 rack's 72 ranks, 1 GiB is k = 256 chunks (512 KiB each, capped at
// 256); its dependencies are the ups' on their previous up ((k-1) n), the
// joins' on the ups (k n), and the downs' on their join and, after the
// first chunk, their previous down (n + 2 (k-1) n): n (4k - 2) = 73,584,
// where each down waiting on every up would take over k n^2 = 1.3 M.
func TestNVLSPlanIsLinearInRanks(t *testing.T) {
	tp, err := topologies.LoadShipped("gb200-nvl72")
	if err != nil {
		t.Fatal(err)
	}
	gpus := make([]int, 72)
	for i := range gpus {
		gpus[i] = i
	}
	plan, err := models.BuildCollective(tp.Machine, tp.GPUModels, models.CollSpec{Kind: models.AllReduce, GPUs: gpus, Bytes: 1 << 30, Algorithm: "nvls"})
	if err != nil {
		t.Fatal(err)
	}
	deps := 0
	for _, task := range plan.Tasks {
		deps += len(task.Deps)
	}
	if want := 72 * (4*256 - 2); deps != want {
		t.Errorf("%d dependencies in %d tasks, want %d", deps, len(plan.Tasks), want)
	}
}

// A pipelined chain of k chunks over h hops takes h hop latencies and
// (k + h - 1) chunk times: its fill, h - 1 chunk times, is what NCCL's small
// chunks make negligible. Plans hold enough chunks that the fill costs at
// most 1/32 of the time: a broadcast down a chain of 16 GPUs (15 hops), at
// 80 GB/s a hop (the links' kernel-driven rate, every hop on links of its
// own through the switch), of 1 GiB takes S/80 GB/s, at most 1/32 more,
// and its latencies (NCCL's base and 15 hops, under 100 us). 256 chunks
// would add 14/256: 5.5%.
func TestLongChainsFillLittle(t *testing.T) {
	topo := "name: sixteen\nhosts: [{name: cpu0}]\nswitches: [{name: nvs, kind: nvswitch}]\ngpus:\n"
	links := "links:\n"
	for i := 0; i < 16; i++ {
		topo += fmt.Sprintf("  - {name: gpu%d, model: H100-SXM, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}\n", i)
		links += fmt.Sprintf("  - {ends: [gpu%d, nvs], kind: nvlink, bandwidth: 100 GB/s, sm_bandwidth: 80 GB/s}\n  - {ends: [gpu%d, cpu0], type: pcie5x16}\n", i, i)
	}
	tp, err := topologies.Load("sixteen.yaml", []byte(topo+links))
	if err != nil {
		t.Fatal(err)
	}
	gpus := make([]int, 16)
	for i := range gpus {
		gpus[i] = i
	}
	const size = 1 << 30
	ideal := size / 80e9
	for _, kind := range []string{models.Broadcast, models.Reduce} {
		got := collectiveTime(t, tp, models.CollSpec{Kind: kind, GPUs: gpus, Bytes: size, Protocol: "simple"}).Seconds()
		if got < ideal || got > ideal*(1+1.0/32)+100e-6 {
			t.Errorf("%s of 1 GiB down 16 GPUs: %.4g ms; want %.4g ms (1 GiB at 80 GB/s) to %.4g ms", kind, got*1e3, ideal*1e3, (ideal*(1+1.0/32)+100e-6)*1e3)
		}
	}
}

// An NVLS all-reduce's efficiency takes link capacity, not bytes: each
// GPU's link to the switch carries the S bytes the GPU sends up and the S
// it receives down, while the link's load, which its time follows, is
// S / NVLSEfficiency in the link's kernel-driven units each way.
func TestNVLSLinkBytesArePayload(t *testing.T) {
	tp, err := topologies.LoadShipped("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	m := tp.Machine
	const size = 1 << 30
	gpus := []int{0, 1, 2, 3, 4, 5, 6, 7}
	plan, err := models.BuildCollective(m, tp.GPUModels, models.CollSpec{Kind: models.AllReduce, GPUs: gpus, Bytes: size, Algorithm: "nvls"})
	if err != nil {
		t.Fatal(err)
	}
	p := &sim.Program{Name: "nvls", Threads: []sim.Thread{{Name: "main", Host: m.GPUs[0].Host}}}
	var streams []int
	for _, g := range gpus {
		p.Streams = append(p.Streams, sim.Stream{GPU: g, Name: "comm"})
		streams = append(streams, len(p.Streams)-1)
	}
	p.Threads[0].Ops = append(p.Threads[0].Ops, sim.Op{ID: "c", Kind: sim.OpCollective, Coll: plan, Streams: streams, Stream: streams[0]})
	res, err := sim.Run(m, p)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ls := range res.Links {
		l := m.Links[ls.Link]
		nvswitch := func(n sim.Node) bool { return n.Kind == sim.NodeSwitch && m.Switches[n.Index].Kind == "nvswitch" }
		a, b := m.Nodes[l.A], m.Nodes[l.B]
		if ls.Both || !(a.Kind == sim.NodeGPU && nvswitch(b) || nvswitch(a) && b.Kind == sim.NodeGPU) {
			continue
		}
		seen++
		load := size / models.NVLSEfficiency * l.KernelCoef()
		if math.Abs(ls.Bytes/size-1) > 1e-9 || math.Abs(ls.Used/load-1) > 1e-9 {
			t.Errorf("%s: %.6g bytes, load %.6g; want %d bytes, load %.6g", ls.LinkName(m), ls.Bytes, ls.Used, size, load)
		}
	}
	if seen != 16 {
		t.Errorf("%d directions of GPU-NVSwitch links, want 16", seen)
	}
}

// A ring runs at its slowest link, however fast its others are: three H100s
// in a triangle, gpu0's two links 80 GB/s for kernels and the third link
// 80, 160 or 320. The rings are 0->1->2->0 and its reverse, 80 GB/s each,
// each carrying half the data in chunks of a third of that. A ring
// all-reduce of n = 3 is 2(n-1) = 4 steps, each its hop latency (3.4 us,
// Simple over NVLink) then a chunk at 80 GB/s, after the 8.4 us base
// latency; all-gather is n-1 = 2 steps. (A rank fed by the faster link
// used to send its next chunk beside the last one on its slower link: the
// two shared it and the ring stalled: 25% slower at 320.)
func TestRingRunsAtItsSlowestLink(t *testing.T) {
	const size = 1 << 30
	chunk := float64(size) / 2 / 3
	for _, fast := range []int{80, 160, 320} {
		yaml := fmt.Sprintf(`
name: triangle
hosts: [{name: cpu0}]
gpus:
  - {name: gpu0, model: H100-SXM, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}
  - {name: gpu1, model: H100-SXM, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}
  - {name: gpu2, model: H100-SXM, memory_bandwidth: 100000 GB/s, memory_efficiency: 1}
links:
  - {ends: [gpu0, gpu1], kind: nvlink, bandwidth: 100 GB/s, sm_bandwidth: 80 GB/s}
  - {ends: [gpu0, gpu2], kind: nvlink, bandwidth: 100 GB/s, sm_bandwidth: 80 GB/s}
  - {ends: [gpu1, gpu2], kind: nvlink, bandwidth: %d GB/s, sm_bandwidth: %d GB/s}
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
  - {ends: [gpu2, cpu0], type: pcie5x16}
`, fast*100/80, fast)
		tp, err := topologies.Load("triangle.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			kind  string
			steps float64
		}{{models.AllReduce, 4}, {models.AllGather, 2}} {
			spec := models.CollSpec{Kind: tc.kind, GPUs: []int{0, 1, 2}, Bytes: size, Algorithm: "ring", Protocol: "simple"}
			got := collectiveTime(t, tp, spec).Seconds()
			want := 8.4e-6 + tc.steps*(3.4e-6+chunk/80e9)
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("%s with a %d GB/s third link: %.6g s, want %.6g s", tc.kind, fast, got, want)
			}
		}
	}
}

// GPUs joined by NVLink, directly or through NVSwitches, share a domain;
// a collective over two domains of two GPUs or more each under hosts of
// their own (two nodes) is warned of; one over a single domain, over GPUs
// without NVLink (a PCIe box), or over one host's bridged pairs is not.
func TestMultiNodeWarning(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: two-nodes\nhosts: [{name: cpu0}, {name: cpu1}]\ngpus:\n")
	for g := 0; g < 8; g++ {
		fmt.Fprintf(&b, "  - {name: gpu%d, model: H100-SXM, host: cpu%d}\n", g, g/4)
	}
	b.WriteString("switches: [{name: nvs0, kind: nvswitch}, {name: nvs1, kind: nvswitch}, {name: ib, kind: pcie}]\nlinks:\n")
	for g := 0; g < 8; g++ {
		fmt.Fprintf(&b, "  - {ends: [gpu%d, nvs%d], type: nvlink4, count: 18}\n  - {ends: [gpu%d, cpu%d], type: pcie5x16}\n  - {ends: [gpu%d, ib], type: pcie5x16}\n", g, g/4, g, g/4, g)
	}
	tp, err := topologies.Load("two-nodes.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	m := tp.Machine
	if got, want := models.NVLinkDomains(m, []int{0, 5, 1, 7}), [][]int{{0, 1}, {5, 7}}; !reflect.DeepEqual(got, want) {
		t.Errorf("domains %v, want %v", got, want)
	}
	if w := models.MultiNodeWarning(m, []int{0, 1, 2, 3, 4, 5, 6, 7}); !strings.Contains(w, "spans 2 NVLink domains (of 4, 4 GPUs)") {
		t.Errorf("8 GPUs of two nodes: warning %q", w)
	}
	if w := models.MultiNodeWarning(m, []int{0, 1, 2, 3}); w != "" {
		t.Errorf("one node's GPUs: warning %q", w)
	}
	if w := models.MultiNodeWarning(m, []int{0, 1, 2, 4}); w != "" {
		t.Errorf("one GPU of the second node (a domain of one): warning %q", w)
	}
	// Four GPUs of one host bridged in two pairs: one machine.
	bridged, err := topologies.Load("bridged.yaml", []byte(`
name: bridged
hosts: [{name: cpu0}]
gpus: [{name: gpu0, model: A100-SXM4-80GB}, {name: gpu1, model: A100-SXM4-80GB}, {name: gpu2, model: A100-SXM4-80GB}, {name: gpu3, model: A100-SXM4-80GB}]
links:
  - {ends: [gpu0, gpu1], type: nvlink3, count: 4}
  - {ends: [gpu2, gpu3], type: nvlink3, count: 4}
  - {ends: [gpu0, cpu0], type: pcie4x16}
  - {ends: [gpu1, cpu0], type: pcie4x16}
  - {ends: [gpu2, cpu0], type: pcie4x16}
  - {ends: [gpu3, cpu0], type: pcie4x16}
`))
	if err != nil {
		t.Fatal(err)
	}
	if d := models.NVLinkDomains(bridged.Machine, []int{0, 1, 2, 3}); len(d) != 2 {
		t.Errorf("bridged pairs: %d domains, want 2", len(d))
	}
	if w := models.MultiNodeWarning(bridged.Machine, []int{0, 1, 2, 3}); w != "" {
		t.Errorf("one host's bridged pairs: warning %q", w)
	}
	// Two sockets of one box joined by UPI, one or two bridged pairs under
	// each: one node. Two boxes (sockets not joined), two bridged pairs
	// each: two nodes, warned of although each node holds two domains.
	pairs := func(joined bool, per int) string {
		var b strings.Builder
		b.WriteString("name: pairs\nhosts: [{name: cpu0}, {name: cpu1}]\ngpus:\n")
		for g := 0; g < 2*per; g++ {
			fmt.Fprintf(&b, "  - {name: gpu%d, model: A100-SXM4-80GB, host: cpu%d}\n", g, g/per)
		}
		b.WriteString("links:\n")
		for g := 0; g < 2*per; g += 2 {
			fmt.Fprintf(&b, "  - {ends: [gpu%d, gpu%d], type: nvlink3, count: 4}\n", g, g+1)
		}
		for g := 0; g < 2*per; g++ {
			fmt.Fprintf(&b, "  - {ends: [gpu%d, cpu%d], type: pcie4x16}\n", g, g/per)
		}
		if joined {
			b.WriteString("  - {ends: [cpu0, cpu1], type: upi}\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		joined bool
		per    int // GPUs a socket
		warn   bool
	}{{true, 2, false}, {true, 4, false}, {false, 4, true}} {
		tp, err := topologies.Load("pairs.yaml", []byte(pairs(tc.joined, tc.per)))
		if err != nil {
			t.Fatal(err)
		}
		all := make([]int, 2*tc.per)
		for i := range all {
			all[i] = i
		}
		if w := models.MultiNodeWarning(tp.Machine, all); (w != "") != tc.warn {
			t.Errorf("sockets joined %v, %d GPUs each: warning %q, want one: %v", tc.joined, tc.per, w, tc.warn)
		}
	}
	box, err := topologies.LoadShipped("pcie-8x-4090")
	if err != nil {
		t.Fatal(err)
	}
	if w := models.MultiNodeWarning(box.Machine, []int{0, 1, 2, 3, 4, 5, 6, 7}); w != "" {
		t.Errorf("a PCIe box: warning %q", w)
	}
	nvl, err := topologies.LoadShipped("gb200-nvl72")
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, len(nvl.Machine.GPUs))
	for i := range all {
		all[i] = i
	}
	if d := models.NVLinkDomains(nvl.Machine, all); len(d) != 1 {
		t.Errorf("gb200-nvl72: %d domains, want 1 (the rack's NVSwitch; C2C to the Graces joins none)", len(d))
	}
}

// A forced algorithm that cannot run the collective says why in terms of
// the collective asked: the ring remark for broadcast and reduce only, and
// NVLS for all-gather as what gpusim models, not what NCCL runs.
func TestForcedAlgorithmMessages(t *testing.T) {
	tp, err := topologies.Load("two-on-nvswitch.yaml", []byte(twoOnNVSwitch))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind, algo, want string
	}{
		{models.AllToAll, "tree", "algorithm tree runs all-reduce only"},
		{models.Broadcast, "tree", "algorithm tree runs all-reduce only (NCCL runs broadcast and reduce as rings)"},
		{models.AllGather, "nvls", "gpusim models algorithm nvls for all-reduce only (NCCL also runs it for all-gather and reduce-scatter within a node)"},
	} {
		_, err := models.BuildCollective(tp.Machine, tp.GPUModels, models.CollSpec{Kind: c.kind, GPUs: []int{0, 1}, Bytes: 1 << 20, Algorithm: c.algo})
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s with %s: %v; want it to end %q", c.kind, c.algo, err, c.want)
		}
	}
}

// A plan stops at CollSpec.MaxTasks with an error that says so, and one
// within the limit is the plan built without it. A 1 MiB ring all-reduce
// over the DGX H100's 8 GPUs is counted first without a limit.
func TestPlanTaskLimit(t *testing.T) {
	tp, err := topologies.LoadShipped("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	spec := models.CollSpec{Kind: models.AllReduce, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Bytes: 1 << 20, Algorithm: "ring"}
	full, err := models.BuildCollective(tp.Machine, tp.GPUModels, spec)
	if err != nil {
		t.Fatal(err)
	}
	n := len(full.Tasks)
	spec.MaxTasks = n
	if p, err := models.BuildCollective(tp.Machine, tp.GPUModels, spec); err != nil || !reflect.DeepEqual(p, full) {
		t.Errorf("limit %d, the plan's own count: %v; want the plan unchanged", n, err)
	}
	spec.MaxTasks = n - 1
	_, err = models.BuildCollective(tp.Machine, tp.GPUModels, spec)
	if want := fmt.Sprintf("its ring plan over 8 GPUs has more than %d transfers, more than the memory free here holds", n-1); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("limit %d: %v; want %q", n-1, err, want)
	}
}

// TestLL128ForcedRunsOverPCIe: NCCL enables LL128 by default over NVLink
// only, but NCCL_PROTO=LL128 runs it anywhere (methods.md §1.4): on a
// PCIe box the tuner never picks it, and protocol ll128 is run as asked.
func TestLL128ForcedRunsOverPCIe(t *testing.T) {
	tp, err := topologies.LoadShipped("pcie-8x-4090")
	if err != nil {
		t.Fatal(err)
	}
	gpus := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, size := range []int64{8, 1 << 16, 1 << 20, 1 << 24, 1 << 30} {
		plan, err := models.BuildCollective(tp.Machine, tp.GPUModels, models.CollSpec{Kind: models.AllReduce, GPUs: gpus, Bytes: size})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Protocol == "ll128" {
			t.Errorf("%d bytes: the tuner chose ll128 over PCIe", size)
		}
	}
	plan, err := models.BuildCollective(tp.Machine, tp.GPUModels, models.CollSpec{Kind: models.AllReduce, GPUs: gpus, Bytes: 1 << 20, Protocol: "ll128"})
	if err != nil || plan.Protocol != "ll128" {
		t.Fatalf("forced ll128: %v, %v; want a plan with it", plan, err)
	}
}

// TestChainHopLatency: NCCL charges a ring broadcast or reduce the tree's
// hop latency under Simple and the ring's under LL and LL128 (methods.md
// §1.3). Eight bytes broadcast between two GPUs on an NVSwitch, one hop:
// Simple 8.4 us of base latency and 4.0 of the hop (the ring's would be
// 3.4); LL 6.6 and 0.6; LL128 14.0 and 1.9. The bytes add under 1 ns.
func TestChainHopLatency(t *testing.T) {
	tp, err := topologies.Load("two-on-nvswitch.yaml", []byte(twoOnNVSwitch))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		proto string
		want  sim.Time
	}{{"simple", 12400 * sim.Nanosecond}, {"ll", 7200 * sim.Nanosecond}, {"ll128", 15900 * sim.Nanosecond}} {
		for _, kind := range []string{models.Broadcast, models.Reduce} {
			got := collectiveTime(t, tp, models.CollSpec{Kind: kind, GPUs: []int{0, 1}, Bytes: 8, Protocol: c.proto})
			if got < c.want || got > c.want+sim.Nanosecond {
				t.Errorf("%s %s of 8 bytes: %s, want %s", kind, c.proto, got, c.want)
			}
		}
	}
}
