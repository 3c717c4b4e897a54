package sim_test

import (
	"testing"

	"gpusim/sim"
	"gpusim/topologies"
)

// Two GPUs whose fewest-hops route forbids P2P but which have another
// route that allows it: CUDA reports peer access over that route
// (cudaDeviceCanAccessPeer) and cudaMemcpyPeer moves the bytes over it by
// DMA, never through host memory.
const p2pHeader = `
hosts:
  - {name: cpu0, cores: 16, api_overhead: 0 us}
gpus:
  - {name: gpu0, model: L40S, host: cpu0, copy_overhead: 0 us}
  - {name: gpu1, model: L40S, host: cpu0, copy_overhead: 0 us}
`

func TestCopyTakesAnotherRouteWhereThePreferredForbidsP2P(t *testing.T) {
	for _, tc := range []struct{ name, yaml, route string }{
		{"nvlink link p2p:false", `name: a` + p2pHeader + `switches:
  - {name: sw0, kind: pcie}
links:
  - {ends: [gpu0, gpu1], kind: nvlink, bandwidth: 100 GB/s, latency: 0 us, p2p: false}
  - {ends: [gpu0, sw0], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [gpu1, sw0], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [sw0, cpu0], bandwidth: 25 GB/s, latency: 0 us}
`, "gpu0 -> sw0 -> gpu1"},
		{"nvswitch p2p:false", `name: b` + p2pHeader + `switches:
  - {name: nvs, kind: nvswitch, p2p: false}
  - {name: sw0, kind: pcie}
links:
  - {ends: [gpu0, nvs], kind: nvlink, bandwidth: 100 GB/s, latency: 0 us}
  - {ends: [gpu1, nvs], kind: nvlink, bandwidth: 100 GB/s, latency: 0 us}
  - {ends: [gpu0, sw0], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [gpu1, sw0], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [sw0, cpu0], bandwidth: 25 GB/s, latency: 0 us}
`, "gpu0 -> sw0 -> gpu1"},
		// No NVLink: the fewest hops cross swx, which forbids P2P; a longer
		// route through sw0 and sw1 allows it.
		{"pcie shortest route p2p:false", `name: c` + p2pHeader + `switches:
  - {name: swx, kind: pcie, p2p: false}
  - {name: sw0, kind: pcie}
  - {name: sw1, kind: pcie}
links:
  - {ends: [gpu0, swx], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [gpu1, swx], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [swx, cpu0], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [gpu0, sw0], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [sw0, sw1], bandwidth: 25 GB/s, latency: 0 us}
  - {ends: [sw1, gpu1], bandwidth: 25 GB/s, latency: 0 us}
`, "gpu0 -> sw0 -> sw1 -> gpu1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := topologies.Load("topo.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			m := topo.Machine
			p := m.PathBetween(0, 1)
			if got := m.FormatRoute(m.GPUs[0].Node, p.Route); p.Kind != sim.PathP2P || got != tc.route {
				t.Errorf("path %v %q, want pcie-p2p %q", p.Kind, got, tc.route)
			}
			res := simulate(t, tc.yaml, `name: copy
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {id: move, from: gpu0, to: gpu1, bytes: 1 GiB, stream: gpu0/copy}
      - sync: {stream: gpu0/copy}
`)
			// No overheads, no latencies: 2^30 B at 25 GB/s.
			const want = sim.Time(1 << 30 * 1e12 / 25e9) // 42.94967296 ms
			for _, r := range res.Ops {
				if r.ID == "move" && (r.Copy != sim.CopyP2P || r.End-r.Start != want) {
					t.Errorf("copy took %v as %v; want %v as pcie-p2p", r.End-r.Start, r.Copy, want)
				}
			}
		})
	}
}

// A collective relays through a GPU over NVLink (NCCL's NVB path); where
// the fewest-hops NVLink route to the relay forbids P2P, it takes one
// that allows it.
func TestCollectiveRelayAvoidsAnNVLinkRouteWithoutP2P(t *testing.T) {
	topo, err := topologies.Load("topo.yaml", []byte(`name: relay
hosts:
  - {name: cpu0}
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu0}
  - {name: gpu2, model: H100-SXM, host: cpu0}
switches:
  - {name: sw0, kind: pcie}
  - {name: nvs, kind: nvswitch}
links:
  - {ends: [gpu0, gpu2], kind: nvlink, bandwidth: 100 GB/s, p2p: false}
  - {ends: [gpu0, nvs], kind: nvlink, bandwidth: 100 GB/s}
  - {ends: [nvs, gpu2], kind: nvlink, bandwidth: 100 GB/s}
  - {ends: [gpu2, gpu1], kind: nvlink, bandwidth: 100 GB/s}
  - {ends: [gpu0, sw0], type: pcie5x16}
  - {ends: [gpu1, sw0], type: pcie5x16}
  - {ends: [gpu2, sw0], type: pcie5x16}
  - {ends: [sw0, cpu0], type: pcie5x16}
`))
	if err != nil {
		t.Fatal(err)
	}
	m := topo.Machine
	p := m.CollectivePath(0, 1)
	if got := m.FormatRoute(m.GPUs[0].Node, p.Route); p.Kind != sim.PathNVLink || p.Relay != 2 || got != "gpu0 -> nvs -> gpu2 -> gpu1" {
		t.Errorf("collective path %v via GPU %d: %q; want nvlink via GPU 2: gpu0 -> nvs -> gpu2 -> gpu1", p.Kind, p.Relay, got)
	}
}

// Peer copies between two GPUs of one Grace cross the NVSwitch, not the
// CPU between their NVLink-C2C links, whatever order the links come in.
func TestPeerRouteDoesNotCrossACPU(t *testing.T) {
	topo, err := topologies.Load("topo.yaml", []byte(`name: c2cfirst
hosts:
  - {name: grace0, cores: 72}
gpus:
  - {name: gpu0, model: B200, host: grace0}
  - {name: gpu1, model: B200, host: grace0}
switches:
  - {name: nvswitch, kind: nvswitch}
links:
  - {ends: [grace0, gpu0], type: nvlink-c2c}
  - {ends: [grace0, gpu1], type: nvlink-c2c}
  - {ends: [gpu0, nvswitch], type: nvlink5, count: 18}
  - {ends: [gpu1, nvswitch], type: nvlink5, count: 18}
`))
	if err != nil {
		t.Fatal(err)
	}
	m := topo.Machine
	p := m.PathBetween(0, 1)
	if got := m.FormatRoute(m.GPUs[0].Node, p.Route); p.Kind != sim.PathNVLink || got != "gpu0 -> nvswitch -> gpu1" {
		t.Errorf("path %v %q, want nvlink gpu0 -> nvswitch -> gpu1", p.Kind, got)
	}
	// The host still reaches its GPUs over C2C.
	r, _ := m.Route(m.Hosts[0].Node, m.GPUs[1].Node)
	if got := m.FormatRoute(m.Hosts[0].Node, r); got != "grace0 -> gpu1" {
		t.Errorf("host route %q, want grace0 -> gpu1", got)
	}
}
