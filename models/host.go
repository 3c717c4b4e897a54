package models

import "gpusim/sim"

// Host defaults, for host fields a topology leaves out.
const (
	// DefaultAPIOverhead: an async kernel enqueue costs 2.62-2.81 us of host
	// time (measured.md §4, ahrefs/ocannl#488); ~3 us on an RTX 3080 host
	// (facebookincubator/velox#6096).
	DefaultAPIOverhead = 2700 * sim.Nanosecond
	// DefaultSyncLatency: from a kernel's completion to the return of a
	// synchronize waiting on it. Launching a no-op kernel and synchronizing
	// costs 6.29-7.46 us a kernel against 2.62-2.81 us for the launch alone
	// (measured.md §4, ahrefs/ocannl#488); in gpusim that is the launch's
	// api_overhead (2.7 us), the kernel (~0.58 us, the same source's
	// per-node graph time) and this latency: 3.0-4.2 us, 3.6 the midpoint.
	// Calibration measures it as an idle stream's event record + synchronize
	// less the record (5.2 us on an H200 virtual machine,
	// docs/measured/2026-11-29-h200).
	DefaultSyncLatency = 3600 * sim.Nanosecond
	// DefaultGraphLaunch: a CUDA graph replay followed by a synchronize
	// costs ~15 us fixed plus ~0.58 us per kernel node (N=8: 19.4 us;
	// N=117: 82.9 us; measured.md §4, ahrefs/ocannl#488). In gpusim that is
	// the launch, the nodes' kernels and DefaultSyncLatency: 19.4 - 8 x 0.58
	// - 3.6 = 11.2 us, and 82.9 - 117 x 0.58 - 3.6 = 11.4: 11.3 us.
	DefaultGraphLaunch = 11300 * sim.Nanosecond
	// DefaultMemcpyBandwidth is one thread's staging memcpy rate. Pageable
	// D2H at 32 MB reaches 8.5 GB/s against 24.6 pinned on an A100 PCIe host
	// (measured.md §5, gengwg/gpu), so the staging copy bounds it at ~8.5.
	// The same host's pageable H2D is 3.3 GB/s, which this one number does not
	// reproduce (see docs/model.md).
	DefaultMemcpyBandwidth = 8.5e9
	// DefaultMemoryBandwidth: STREAM triad 151.3-173.4 GB/s per socket on a
	// 2x Xeon 8462Y+ (measured.md §1b).
	DefaultMemoryBandwidth = 150e9
	// DefaultStagingChunk and DefaultStagingBuffers describe the driver's
	// pinned bounce buffers for staged copies. The driver does not publish
	// them; these are assumptions that calibration will fit (a device-wide
	// staging buffer: libcudf-rs#35 in measured.md §4).
	DefaultStagingChunk   = 2 << 20
	DefaultStagingBuffers = 2
	// DefaultStagingHandoff: the driver's delay between the two DMAs of each
	// chunk of a GPU-to-GPU copy staged through host memory. Fitted to
	// p2pBandwidthLatencyTest's P2P=Disabled figures on 8x H100 (measured.md
	// 1c): 37.3 GB/s unidirectional where each leg alone moves 55 GB/s, and
	// 14.6-19.2 us for a 16-byte copy where the two DMAs take 6 us.
	DefaultStagingHandoff = 12 * sim.Microsecond
	// DefaultStagingSetup: a cudaMemcpyPeerAsync the driver stages through
	// host memory costs the host 6.31-7.98 us to enqueue, against 1.76-2.01
	// us with peer access (p2pBandwidthLatencyTest's CPU latency on 8x H100,
	// measured.md 1c; the enqueue alone, the stream blocked): the midpoints
	// differ by 5.26 us. On 8x A100 (2b, not fitted) they differ by 5.9 us
	// (6.88-9.62 against 1.87-2.80).
	DefaultStagingSetup = 5260 * sim.Nanosecond
)
