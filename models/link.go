package models

import (
	"strings"

	"gpusim/sim"
)

// LinkType is a link preset: the raw per-direction rate of one link, the
// fraction of it that DMA payload reaches, and a latency.
type LinkType struct {
	Name string
	Kind sim.LinkKind
	// Raw is the signalling rate per direction after line coding, bytes/s.
	Raw float64
	// Efficiency is the fraction of Raw that large copy-engine copies reach,
	// in (0, 1].
	Efficiency float64
	// SMEfficiency is the fraction of Raw that kernel-driven transfers
	// (collectives, SM copies) reach.
	SMEfficiency float64
	// Latency is the one-way latency of the link.
	Latency sim.Time
	// P2P says whether peer-to-peer traffic may cross it.
	P2P bool
	// Duplex is the share of twice one direction's bandwidth that both
	// directions carry together (a link's duplex_bandwidth over twice its
	// bandwidth); 0 where no limit is known.
	Duplex float64
}

// Bandwidth returns the effective per-direction bandwidth of copy-engine
// copies: Raw * Efficiency.
func (l LinkType) Bandwidth() float64 { return float64(l.Raw * l.Efficiency) }

// SMBandwidth returns the effective per-direction bandwidth of
// kernel-driven transfers: Raw * SMEfficiency.
func (l LinkType) SMBandwidth() float64 { return float64(l.Raw * l.SMEfficiency) }

// PCIe per-direction raw rates: lanes * transfer rate * 128/130 (Gen3 and
// later line coding) / 8 bits (measured.md §5: Gen3 x16 15.75, Gen4 x16 31.5,
// Gen5 x16 63 GB/s).
const (
	pcie3Lane = 8e9 * 128 / 130 / 8
	pcie4Lane = 16e9 * 128 / 130 / 8
	pcie5Lane = 32e9 * 128 / 130 / 8
)

// PCIe efficiencies: large pinned H2D/D2H copies over x16 (measured.md §5).
const (
	// Gen3: 12.1-13.1 GB/s of 15.75 (P100, gearshifft#82, jdh4/della-gpu-A100): ~0.80.
	pcie3Eff = 0.80
	// Gen4: 25.9-26.2 (nvbandwidth README, A100 class), 24-27.1 (8x RTX 4090) of 31.5: ~0.83.
	pcie4Eff = 0.83
	// Gen5: 55.2-55.4 of 63 (8x H100 SXM, nvbandwidth v0.10, measured.md §1b): ~0.88.
	pcie5Eff = 0.88
	// PCIe latency per hop: an assumption (no direct measurement in
	// shared/groundtruth); calibration fits it.
	pcieLatency = 500 * sim.Nanosecond
	// Kernel-driven transfers over PCIe: NCCL models a x16 link as 12, 24
	// and 48 GB/s for Gen3, 4 and 5 (width x speed / 80, src/graph/topo.cc;
	// shared/groundtruth/methods.md §2.2): 0.762 of raw.
	pcieSMEff = 0.762
	// H2D and D2H at once over one x16 link fall short of twice one way:
	// Gen4 18.4-19.6 GB/s per direction against 25.9-26.2 one way
	// (nvbandwidth README example, host_to_device_bidirectional_memcpy_ce,
	// measured.md §2c), ~36 in all (~11 + ~25, 8x A100 SXM4,
	// gh-issue:NVIDIA/nvbandwidth#53): 0.69-0.75 of twice one way, 0.72.
	// Gen5: 98.9 and 100.4 GB/s against 2 x 55.2 (the two H200 calibrations
	// of docs/measured/2026-11-29-h200): 0.90. Gen3: no measurement, no
	// limit.
	pcie4Duplex = 0.72
	pcie5Duplex = 0.90
)

// NVLink: 25 GB/s per link per direction for NVLink2, 3 and 4 (V100 300 GB/s
// over 6 links, A100 600 over 12, H100 900 over 18, both directions summed;
// measured.md §1a, §2a, §6).
const nvlinkLink = 25e9

var linkTypes = []LinkType{
	{Name: "pcie3x16", Kind: sim.LinkPCIe, Raw: 16 * pcie3Lane, Efficiency: pcie3Eff, SMEfficiency: pcieSMEff, Latency: pcieLatency, P2P: true},
	{Name: "pcie3x8", Kind: sim.LinkPCIe, Raw: 8 * pcie3Lane, Efficiency: pcie3Eff, SMEfficiency: pcieSMEff, Latency: pcieLatency, P2P: true},
	{Name: "pcie4x16", Kind: sim.LinkPCIe, Raw: 16 * pcie4Lane, Efficiency: pcie4Eff, SMEfficiency: pcieSMEff, Latency: pcieLatency, P2P: true, Duplex: pcie4Duplex},
	{Name: "pcie4x8", Kind: sim.LinkPCIe, Raw: 8 * pcie4Lane, Efficiency: pcie4Eff, SMEfficiency: pcieSMEff, Latency: pcieLatency, P2P: true, Duplex: pcie4Duplex},
	{Name: "pcie5x16", Kind: sim.LinkPCIe, Raw: 16 * pcie5Lane, Efficiency: pcie5Eff, SMEfficiency: pcieSMEff, Latency: pcieLatency, P2P: true, Duplex: pcie5Duplex},
	{Name: "pcie5x8", Kind: sim.LinkPCIe, Raw: 8 * pcie5Lane, Efficiency: pcie5Eff, SMEfficiency: pcieSMEff, Latency: pcieLatency, P2P: true, Duplex: pcie5Duplex},
	// NVLink2: no V100 bandwidth measurement in shared/groundtruth; efficiency
	// assumed as NVLink3 (same 25 GB/s per link).
	// Kernel-driven: NCCL's SM70_NVLINK_BW, 20 GB/s per link (topo.h): 0.80.
	{Name: "nvlink2", Kind: sim.LinkNVLink, Raw: nvlinkLink, Efficiency: 0.92, SMEfficiency: 0.80, Latency: 150 * sim.Nanosecond, P2P: true},
	// NVLink3: unidirectional P2P writes 265-275.5 GB/s over 12 links of 300
	// (p2pBandwidthLatencyTest, measured.md §2b), nvbandwidth D2D write CE
	// 274.9-276.8 (§2c): 0.92. Latency: P2P 16-byte copy latency minus the
	// local one, ~0.3 us over two hops (GPU-NVSwitch-GPU, §2b): 0.15 us.
	// Kernel-driven: "about 20 GB/s effective with 128B SM payloads" per
	// NVLink3 link (NCCL maintainer, nccl-tests#149, measured.md §2a) and
	// NCCL's SM80_NVLINK_BW of 20 GB/s: 0.80.
	{Name: "nvlink3", Kind: sim.LinkNVLink, Raw: nvlinkLink, Efficiency: 0.92, SMEfficiency: 0.80, Latency: 150 * sim.Nanosecond, P2P: true},
	// NVLink4: unidirectional P2P writes 365-394 GB/s over 18 links of 450
	// (measured.md §1c), nvbandwidth D2D read CE 395.1 (§1b): 0.875; the NCCL
	// maintainer's "effective NVLink bandwidth of 370GB/s" (§1e) is the SM
	// (kernel) path. Latency: P2P latency 2.26-3.35 us minus local 1.96-2.27
	// (§1c), ~0.75 us over two hops: 0.37 us.
	// Kernel-driven: NCCL's SM90_NVLINK_BW, 20.6 GB/s per link (topo.h),
	// 370.8 for 18 links, the "effective NVLink bandwidth of 370GB/s" of the
	// NCCL maintainer (nccl-tests#212, measured.md §1e): 0.824.
	{Name: "nvlink4", Kind: sim.LinkNVLink, Raw: nvlinkLink, Efficiency: 0.875, SMEfficiency: 0.824, Latency: 200 * sim.Nanosecond, P2P: true},
	// NVLink5 (Blackwell): 50 GB/s per link per direction, twice NVLink4 (B200:
	// 1.8 TB/s over 18 links, both directions summed; NVIDIA DGX B200 and HGX
	// datasheets). No measurement in shared/groundtruth: copy-engine
	// efficiency and latency assumed as NVLink4 until calibrated.
	// Kernel-driven: NCCL's SM100_NVLINK_BW, 40.1 GB/s per link (topo.h;
	// methods.md §2.1): 0.802, as NVLink4's 0.824 is its SM90 figure.
	{Name: "nvlink5", Kind: sim.LinkNVLink, Raw: 2 * nvlinkLink, Efficiency: 0.875, SMEfficiency: 40.1e9 / (2 * nvlinkLink), Latency: 200 * sim.Nanosecond, P2P: true},
	// Intel UPI 2.0 (Sapphire Rapids) at 16 GT/s moves 2 bytes per transfer per
	// direction: 32 GB/s per link. Remote STREAM triad on a 2x Xeon 8462Y+ (3
	// UPI links) is 101.1 GB/s (measured.md §1b); triad's reads (2/3 of it)
	// cross one way: 67 GB/s of 96, ~0.7. NVIDIA GPUs do not do P2P across
	// the inter-socket link (the SYS pairs of measured.md §1c, §6 are staged).
	{Name: "upi", Kind: sim.LinkSocket, Raw: 32e9, Efficiency: 0.7, SMEfficiency: 0.7, Latency: pcieLatency, P2P: false},
	// Intel UPI 2.0 at 20 GT/s (Emerald Rapids, Xeon Platinum 8570: 4 links at
	// 20 GT/s, Intel ARK): 40 GB/s per link per direction; efficiency assumed
	// as the 16 GT/s links' (no measurement in shared/groundtruth).
	{Name: "upi20", Kind: sim.LinkSocket, Raw: 40e9, Efficiency: 0.7, SMEfficiency: 0.7, Latency: pcieLatency, P2P: false},
	// NVLink-C2C: 450 GB/s per direction (GH200, measured.md §6). No
	// measurement in shared/groundtruth: efficiency and latency assumed as NVLink4.
	{Name: "nvlink-c2c", Kind: sim.LinkC2C, Raw: 450e9, Efficiency: 0.875, SMEfficiency: 0.824, Latency: 200 * sim.Nanosecond, P2P: true},
}

// LookupLink returns the link preset with that name (case-insensitive).
func LookupLink(name string) (LinkType, bool) {
	for _, l := range linkTypes {
		if strings.EqualFold(l.Name, name) {
			return l, true
		}
	}
	return LinkType{}, false
}

// LinkNames lists the link presets.
func LinkNames() []string {
	var out []string
	for _, l := range linkTypes {
		out = append(out, l.Name)
	}
	return out
}
