package models

import (
	"fmt"
	"strings"
)

// GPUPresetFor maps a GPU's product name, as NVML and the CUDA driver
// report it ("NVIDIA H100 80GB HBM3"), to a GPU preset (see GPUNames). It
// returns "" when no preset fits, and a note when the mapping is an
// approximation or fails.
func GPUPresetFor(name string) (preset, note string) {
	up := strings.ToUpper(name)
	f := strings.Fields(strings.NewReplacer("-", " ", "_", " ").Replace(up))
	has := func(tok string) bool {
		for _, x := range f {
			if x == tok {
				return true
			}
		}
		return false
	}
	none := func(why string) (string, string) {
		return "", fmt.Sprintf("no gpusim GPU preset for %q%s; presets: %s", name, why, strings.Join(GPUNames(), ", "))
	}
	switch {
	case has("GH200"):
		return none(" (Grace Hopper: its NVLink-C2C host link is not what NVML's PCIe view shows; start from the shipped gh200 topology)")
	case has("GB200"):
		return none(" (Grace Blackwell: its NVLink-C2C host link is not what NVML's PCIe view shows; start from the shipped gb200-nvl72 topology)")
	case has("B200"):
		return "B200", ""
	case has("B100"), has("B300"):
		return none(" (the only Blackwell preset is B200; B100 runs at a lower power limit, B300 has other peaks)")
	case has("H200") && has("NVL"):
		return "H200-SXM", fmt.Sprintf("%q modelled as H200-SXM: same GPU and HBM3e, but the NVL card runs at a lower power limit, so its peaks are a little lower", name)
	case has("H200"):
		return "H200-SXM", ""
	case has("H100") && has("PCIE"):
		return none(" (H100 PCIe has 114 SMs and HBM2e, unlike H100-SXM)")
	case has("H100") && has("NVL"):
		return "H100-SXM", fmt.Sprintf("%q modelled as H100-SXM: same GPU, but the NVL card has 94 GB at 3.9 TB/s and a lower power limit", name)
	case has("H100"):
		return "H100-SXM", ""
	case has("A100") && has("SXM4") && has("80GB"):
		return "A100-SXM4-80GB", ""
	case has("A100"):
		return none(" (the only A100 preset is A100-SXM4-80GB)")
	case has("V100") && has("SXM2"):
		return "V100-SXM2", ""
	case has("V100"):
		return none(" (the only V100 preset is V100-SXM2)")
	case has("L40S"):
		return "L40S", ""
	case has("RTX") && has("4090") && f[len(f)-1] == "4090":
		return "RTX-4090", ""
	}
	return none("")
}
