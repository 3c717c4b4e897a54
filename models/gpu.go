package models

import (
	"errors"
	"fmt"
	"strings"

	"gpusim/sim"
)

// DType is a numeric format of a kernel's arithmetic.
type DType string

// DTypes with peak rates in the presets. Tensor-core rates are dense (without
// structured sparsity); fp64 is the FP64 tensor-core rate where the GPU has one.
const (
	FP64 DType = "fp64"
	FP32 DType = "fp32"
	TF32 DType = "tf32"
	FP16 DType = "fp16"
	BF16 DType = "bf16"
	FP8  DType = "fp8"
	INT8 DType = "int8"
)

// DTypes lists the dtypes in a fixed order.
var DTypes = []DType{FP64, FP32, TF32, FP16, BF16, FP8, INT8}

// Size is the bytes of one element (tf32 is stored as fp32).
func (d DType) Size() int {
	switch d {
	case FP64:
		return 8
	case FP16, BF16:
		return 2
	case FP8, INT8:
		return 1
	}
	return 4
}

// GPU is a GPU model: what its datasheet says plus the efficiency factors
// that turn peaks into what kernels and copies reach.
type GPU struct {
	Name string
	// Peak is the peak rate per dtype, FLOP/s (OP/s for int8). A dtype the
	// GPU does not support is absent.
	Peak map[DType]float64
	// MemoryBandwidth is the peak device memory bandwidth, bytes/s.
	MemoryBandwidth float64
	// MemoryBytes is the device memory capacity. Datasheets' "80 GB" of HBM
	// are GiB: an H200's "141 GB" reports 139.8 GiB to cuDeviceTotalMem
	// (docs/measured/2026-11-29-h200, calibrated.yaml), an H100's "80 GB"
	// 81,559 MiB to nvidia-smi (public nvidia-smi logs; to confirm with
	// gpusim calibrate).
	MemoryBytes int64
	// SMs is the number of streaming multiprocessors.
	SMs int
	// CopyEngines is the number of asynchronous copy engines CUDA exposes
	// (cudaDeviceProp.asyncEngineCount).
	CopyEngines int
	// NVLinks and NVLinkGen give the NVLink ports and their generation (type
	// name, "nvlink4"); zero and "" when the GPU has none.
	NVLinks   int
	NVLinkGen string
	// PCIe is the host link type name ("pcie5x16").
	PCIe string
	// Arch is the architecture ("volta", "ampere", "ada", "hopper",
	// "blackwell"), which picks the collective library's per-architecture
	// limits.
	Arch string
	// ComputeEfficiency and MemoryEfficiency are the fractions of the peaks
	// that kernels reach, in (0, 1]; calibration fits MemoryEfficiency
	// (ComputeEfficiency it reports in a comment only).
	ComputeEfficiency, MemoryEfficiency float64
	// KernelOverhead is the fixed device time each roofline kernel adds.
	KernelOverhead sim.Time
	// CopyOverhead is the fixed time a copy engine spends per copy before
	// bytes move.
	CopyOverhead sim.Time
}

const (
	tera = 1e12
	giga = 1e9
	gib  = int64(1) << 30
)

// Default efficiency factors and overheads, shared by all GPU models until
// calibration (gpusim calibrate) fits them per machine.
const (
	// DefaultComputeEfficiency is an assumption, not a measurement: large
	// dense GEMMs commonly reach about 70% of the tensor-core peak; no public
	// measurement of it is in shared/groundtruth. Calibrate before trusting
	// compute-bound predictions.
	DefaultComputeEfficiency = 0.7
	// DefaultMemoryEfficiency: HBM STREAM copy/triad on H100 SXM reaches
	// 2.90-2.97 TB/s of the 3.35 TB/s peak, 0.87-0.89 (measured.md §1e, Azure
	// AI-benchmarking-guide ND H100 v5).
	DefaultMemoryEfficiency = 0.87
	// DefaultKernelOverhead: CUDA graph replay costs ~0.58 us per kernel node
	// once host launch cost is out of the way (measured.md §4, ahrefs/ocannl#488).
	DefaultKernelOverhead = 580 * sim.Nanosecond
)

// gpus are the shipped GPU presets. Peaks come from NVIDIA's datasheets
// (dense rates; the datasheets' headline tensor figures are with sparsity,
// twice these).
var gpus = []GPU{
	{
		// NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: FP64 34 (FP64
		// tensor 67), FP32 67, TF32 494.5, BF16/FP16 989.5, FP8 1979 TFLOP/s,
		// INT8 1979 TOPS; 80 GB HBM3 at 3.35 TB/s; NVLink 900 GB/s (18 links of
		// NVLink4, measured.md §1a); PCIe Gen5 x16. 132 SMs (NVIDIA H100
		// whitepaper, SXM5 configuration).
		Name: "H100-SXM", Arch: "hopper",
		Peak: map[DType]float64{FP64: 67 * tera, FP32: 67 * tera, TF32: 494.5 * tera, FP16: 989.5 * tera,
			BF16: 989.5 * tera, FP8: 1979 * tera, INT8: 1979 * tera},
		MemoryBandwidth: 3350 * giga, MemoryBytes: 80 * gib, SMs: 132,
		// asyncEngineCount 3: CUDA deviceQuery "Concurrent copy and kernel
		// execution: Yes with 3 copy engine(s)" (public deviceQuery logs of
		// H100; not in shared/groundtruth, to confirm with gpusim topo discover).
		CopyEngines: 3, NVLinks: 18, NVLinkGen: "nvlink4", PCIe: "pcie5x16",
		// Local 16-byte copy latency 1.96-2.27 us, the diagonal of
		// p2pBandwidthLatencyTest's P2P-enabled GPU latency matrix (measured.md §1c).
		CopyOverhead: 2000 * sim.Nanosecond,
	},
	{
		// NVIDIA H200 datasheet (SXM): same tensor cores as H100 SXM (FP64 tensor
		// 67, FP32 67, TF32 494.5, BF16/FP16 989.5, FP8 1979 dense); 141 GB
		// HBM3e at 4.8 TB/s (measured.md §6); NVLink4 18 links; PCIe Gen5.
		Name: "H200-SXM", Arch: "hopper",
		Peak: map[DType]float64{FP64: 67 * tera, FP32: 67 * tera, TF32: 494.5 * tera, FP16: 989.5 * tera,
			BF16: 989.5 * tera, FP8: 1979 * tera, INT8: 1979 * tera},
		MemoryBandwidth: 4800 * giga, MemoryBytes: 1398 * gib / 10, SMs: 132, // 139.8 GiB measured
		CopyEngines: 3, NVLinks: 18, NVLinkGen: "nvlink4", PCIe: "pcie5x16", // as H100-SXM
		CopyOverhead: 2000 * sim.Nanosecond, // as H100-SXM (same copy engines)
	},
	{
		// NVIDIA HGX B200 datasheet (8 GPUs: FP64 296, FP32 600, TF32 18000,
		// BF16/FP16 36000, FP8 72000 TFLOP/s and INT8 72000 TOPS, the tensor
		// figures with sparsity; 1.44 TB HBM3e) and DGX B200 datasheet (64 TB/s
		// of HBM3e in all): per GPU FP64 37, FP32 75, TF32 1125, BF16/FP16 2250,
		// FP8 4500 TFLOP/s dense, INT8 4500 TOPS; 180 GB at 8 TB/s; 18 links of
		// NVLink5 (1.8 TB/s); PCIe Gen5 x16 to the host. 148 SMs (public CUDA
		// deviceQuery logs of B200; to confirm with gpusim topo discover). No
		// Blackwell measurement in shared/groundtruth: copy engines, copy
		// overhead and the efficiencies are H100's until calibrated.
		Name: "B200", Arch: "blackwell",
		Peak: map[DType]float64{FP64: 37 * tera, FP32: 75 * tera, TF32: 1125 * tera, FP16: 2250 * tera,
			BF16: 2250 * tera, FP8: 4500 * tera, INT8: 4500 * tera},
		MemoryBandwidth: 8000 * giga, MemoryBytes: 180 * gib, SMs: 148,
		CopyEngines: 3, NVLinks: 18, NVLinkGen: "nvlink5", PCIe: "pcie5x16", // as H100-SXM
		CopyOverhead: 2000 * sim.Nanosecond, // as H100-SXM
	},
	{
		// NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: FP64 9.7 (FP64
		// tensor 19.5), FP32 19.5, TF32 156, BF16/FP16 312 TFLOP/s, INT8 624
		// TOPS; 80 GB HBM2e at 2039 GB/s; NVLink 600 GB/s (12 links of NVLink3,
		// measured.md §2a); PCIe Gen4. 108 SMs (A100 whitepaper). No FP8.
		Name: "A100-SXM4-80GB", Arch: "ampere",
		Peak: map[DType]float64{FP64: 19.5 * tera, FP32: 19.5 * tera, TF32: 156 * tera, FP16: 312 * tera,
			BF16: 312 * tera, INT8: 624 * tera},
		MemoryBandwidth: 2039 * giga, MemoryBytes: 80 * gib, SMs: 108,
		// asyncEngineCount 3 (public deviceQuery logs of A100; to confirm).
		CopyEngines: 3, NVLinks: 12, NVLinkGen: "nvlink3", PCIe: "pcie4x16",
		// Local 16-byte copy latency 2.48-3.34 us, the diagonal of the
		// P2P-enabled latency matrix (measured.md §2b); the median is ~3.1 us.
		CopyOverhead: 3100 * sim.Nanosecond,
		// Device-local copies reach 1539-1584 GB/s (the diagonal of
		// p2pBandwidthLatencyTest, counting read and write, measured.md §2b)
		// of 2039: 0.77.
		MemoryEfficiency: 0.77,
	},
	{
		// NVIDIA Tesla V100 datasheet, V100 SXM2: FP64 7.8, FP32 15.7, tensor
		// (FP16) 125 TFLOP/s; 32 GB HBM2 at 900 GB/s; NVLink 300 GB/s (6 links of
		// NVLink2, measured.md §6); PCIe Gen3. 80 SMs. No BF16, TF32 or FP8.
		Name:            "V100-SXM2",
		Arch:            "volta",
		Peak:            map[DType]float64{FP64: 7.8 * tera, FP32: 15.7 * tera, FP16: 125 * tera},
		MemoryBandwidth: 900 * giga, MemoryBytes: 32 * gib, SMs: 80,
		// asyncEngineCount 6 (public deviceQuery logs of V100 SXM2; to confirm).
		CopyEngines: 6, NVLinks: 6, NVLinkGen: "nvlink2", PCIe: "pcie3x16",
		// No V100 latency matrix in shared/groundtruth: assumed as A100.
		CopyOverhead: 3100 * sim.Nanosecond,
	},
	{
		// NVIDIA L40S datasheet: FP32 91.6, TF32 183, BF16/FP16 362.05, FP8 733
		// TFLOP/s, INT8 733 TOPS (dense); 48 GB GDDR6 at 864 GB/s; PCIe Gen4 x16;
		// no NVLink (measured.md §6). 142 SMs (Ada whitepaper, AD102 in L40S).
		// FP64 is 1/64 of FP32 on Ada (Ada whitepaper): 1.43 TFLOP/s.
		Name: "L40S", Arch: "ada",
		Peak: map[DType]float64{FP64: 1.43 * tera, FP32: 91.6 * tera, TF32: 183 * tera, FP16: 362.05 * tera,
			BF16: 362.05 * tera, FP8: 733 * tera, INT8: 733 * tera},
		MemoryBandwidth: 864 * giga, MemoryBytes: 48 * gib, SMs: 142,
		// asyncEngineCount 2 (public deviceQuery logs of Ada GPUs; to confirm).
		CopyEngines: 2, PCIe: "pcie4x16",
		// No L40S latency matrix in shared/groundtruth: assumed as A100.
		CopyOverhead: 3100 * sim.Nanosecond,
	},
	{
		// NVIDIA Ada Lovelace whitepaper, GeForce RTX 4090 column: FP32 82.6,
		// TF32 82.6, FP16/BF16 tensor with FP32 accumulate 165.2, FP8 330.3
		// TFLOP/s, INT8 660.6 TOPS (dense); 24 GB GDDR6X at 1008 GB/s; 128 SMs;
		// PCIe Gen4 x16; no NVLink and no P2P on the stock driver (measured.md
		// §3a, §6). FP64 is 1/64 of FP32: 1.29 TFLOP/s.
		Name: "RTX-4090", Arch: "ada",
		Peak: map[DType]float64{FP64: 1.29 * tera, FP32: 82.6 * tera, TF32: 82.6 * tera, FP16: 165.2 * tera,
			BF16: 165.2 * tera, FP8: 330.3 * tera, INT8: 660.6 * tera},
		MemoryBandwidth: 1008 * giga, MemoryBytes: 24 * gib, SMs: 128,
		// asyncEngineCount 2 (public deviceQuery logs of RTX 4090; to confirm).
		CopyEngines: 2, PCIe: "pcie4x16",
		CopyOverhead: 3100 * sim.Nanosecond, // assumed as A100
	},
}

func init() {
	for i := range gpus {
		g := &gpus[i]
		g.ComputeEfficiency = DefaultComputeEfficiency
		if g.MemoryEfficiency == 0 {
			g.MemoryEfficiency = DefaultMemoryEfficiency
		}
		g.KernelOverhead = DefaultKernelOverhead
	}
}

// LookupGPU returns the preset with that name (case-insensitive). The map of
// peaks is a fresh copy the caller may change.
func LookupGPU(name string) (GPU, bool) {
	for _, g := range gpus {
		if strings.EqualFold(g.Name, name) {
			c := g
			c.Peak = make(map[DType]float64, len(g.Peak))
			for k, v := range g.Peak {
				c.Peak[k] = v
			}
			return c, true
		}
	}
	return GPU{}, false
}

// NVLS reports whether NCCL runs NVLS (NVLink SHARP) on the GPU behind a
// switch that reduces: from SM90, Hopper (methods.md §1.4).
func (g GPU) NVLS() bool { return g.Arch == "hopper" || g.Arch == "blackwell" }

// GPUNames lists the GPU presets.
func GPUNames() []string {
	var out []string
	for _, g := range gpus {
		out = append(out, g.Name)
	}
	return out
}

// DTypeNames lists the dtypes g has a peak for, in DTypes order.
func (g GPU) DTypeNames() []string {
	var out []string
	for _, d := range DTypes {
		if _, ok := g.Peak[d]; ok {
			out = append(out, string(d))
		}
	}
	return out
}

// ErrKernelRange is KernelTime's error for a kernel longer than the
// simulator's range.
var ErrKernelRange = errors.New("give fewer flops or bytes")

// KernelTime is the roofline cost of a kernel on share (in (0, 1]) of g's
// SMs: the fixed overhead plus the longer of its compute time (flops at
// share of the dtype's peak times the compute efficiency) and its memory
// time (bytes at share of the memory bandwidth times the memory
// efficiency), so that kernels sharing the GPU's SMs add up to at most its
// peak and its bandwidth. flops may be zero for a memory-bound kernel (then
// dtype is ignored). It fails for a dtype g has no rate for, and for a time
// past the simulator's range.
func KernelTime(g GPU, flops float64, dtype DType, bytes, share float64) (sim.Time, error) {
	if !(share > 0 && share <= 1) {
		return 0, fmt.Errorf("SM share %g; want a fraction in (0, 1]", share)
	}
	tc, tm, err := roofline(g, flops, dtype, bytes)
	if err != nil {
		return 0, err
	}
	tc, tm = tc/share, tm/share
	d, ok := sim.FromSeconds(max(tc, tm))
	if !ok || d > sim.MaxTime-g.KernelOverhead {
		return 0, fmt.Errorf("kernel time %.3g s is past the simulator's range (at most %s): %w", max(tc, tm), sim.MaxTime, ErrKernelRange)
	}
	return g.KernelOverhead + d, nil
}

// MemoryBound reports whether a kernel of flops in dtype moving bytes on g
// is limited by its memory traffic rather than its FLOPs (KernelTime's
// roofline, whose larger side sets the time; a tie is compute's).
func MemoryBound(g GPU, flops float64, dtype DType, bytes float64) bool {
	tc, tm, err := roofline(g, flops, dtype, bytes)
	return err == nil && tm > tc
}

// roofline is the time of a kernel's FLOPs and of its bytes on all of g's
// SMs, in seconds (0 for none); an error for FLOPs in a dtype g has no
// rate for.
func roofline(g GPU, flops float64, dtype DType, bytes float64) (tc, tm float64, err error) {
	if flops > 0 {
		peak, ok := g.Peak[dtype]
		if !ok {
			return 0, 0, fmt.Errorf("%s has no %s rate (it has: %s)", g.Name, dtype, strings.Join(g.DTypeNames(), ", "))
		}
		tc = flops / float64(peak*g.ComputeEfficiency)
	}
	if bytes > 0 {
		tm = bytes / float64(g.MemoryBandwidth*g.MemoryEfficiency)
	}
	return tc, tm, nil
}

// ParseDType returns the dtype named s.
func ParseDType(s string) (DType, bool) {
	for _, d := range DTypes {
		if strings.EqualFold(string(d), s) {
			return d, true
		}
	}
	return "", false
}
