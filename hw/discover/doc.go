// Package discover reads the real machine through NVML and describes it as a
// gpusim topology: what `gpusim topo discover` prints.
//
// Discovery asks NVML for each GPU's name, UUID, PCI address, memory,
// maximum PCIe link, NUMA node and CPU affinity, for the NVLinks of each GPU
// (to another GPU, or to an NVSwitch), and for the PCIe relation and P2P
// capability of each pair of GPUs. It then writes the same connection matrix
// that `nvidia-smi topo -m` prints and hands it to topologies.FromNvidiaSMI,
// the builder behind `gpusim topo import`, with the GPU preset and PCIe link
// type that NVML's answers select; so the two commands build topologies the
// same way.
//
//	m, err := discover.Discover(nvml.New())
//	if err != nil { ... }            // no driver, no GPUs, an NVML failure
//	yaml, err := m.Topology("my-box") // a topology gpusim run accepts
//
// What NVML cannot answer here (ERROR_NOT_SUPPORTED, or a function an older
// driver lacks, found by looking the symbol up before calling it) leaves a
// Note and a fallback rather than an error; the Notes head the YAML as
// comments, with the driver and CUDA versions and each GPU's identity.
//
// On an NVSwitch machine every GPU's NVLinks end at switches, not at GPUs:
// two GPUs that both reach switches are shown as NV<the smaller link count>,
// as nvidia-smi does, and the builder turns equal counts into one NVSwitch.
//
// Tests run against go-nvml's mock DGX H100 and H200; the package needs cgo
// (go-nvml loads libnvidia-ml.so at Init, so it builds without a GPU).
package discover
