package models

import "testing"

func TestGPUPresetFor(t *testing.T) {
	for _, c := range []struct {
		name, want string
		noted      bool
	}{
		{"NVIDIA H100 80GB HBM3", "H100-SXM", false},
		{"NVIDIA H100 NVL", "H100-SXM", true},
		{"NVIDIA H100 PCIe", "", true},
		{"NVIDIA H200", "H200-SXM", false},
		{"NVIDIA H200 141GB HBM3e", "H200-SXM", false},
		{"NVIDIA H200 NVL", "H200-SXM", true},
		{"NVIDIA GH200 480GB", "", true},
		{"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB", false},
		{"NVIDIA A100-SXM4-40GB", "", true},
		{"NVIDIA A100 80GB PCIe", "", true},
		{"Tesla V100-SXM2-32GB", "V100-SXM2", false},
		{"Tesla V100-SXM2-16GB", "V100-SXM2", false},
		{"Tesla V100-PCIE-16GB", "", true},
		{"NVIDIA L40S", "L40S", false},
		{"NVIDIA L40", "", true},
		{"NVIDIA GeForce RTX 4090", "RTX-4090", false},
		{"NVIDIA GeForce RTX 4090 D", "", true},
		{"NVIDIA B200", "B200", false},
		{"NVIDIA GB200", "", true},
		{"NVIDIA B300 SXM6 AC", "", true},
		{"NVIDIA B100", "", true},
	} {
		got, note := GPUPresetFor(c.name)
		if got != c.want || (note != "") != c.noted {
			t.Errorf("GPUPresetFor(%q) = %q, note %q; want %q, noted %v", c.name, got, note, c.want, c.noted)
		}
	}
}
