package kernels

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// ptxas is NVIDIA's PTX assembler, where this machine has one: $PTXAS, or
// ptxas on the PATH (Debian's non-free nvidia-cuda-toolkit has it; its .deb
// unpacked with dpkg -x is enough: ptxas needs only libc).
func ptxas(t *testing.T) string {
	if p := os.Getenv("PTXAS"); p != "" {
		return p
	}
	p, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("no ptxas here (set PTXAS, or put it on the PATH): the module is assembled by the driver on a GPU host only")
	}
	return p
}

var reUsed = regexp.MustCompile(`Compiling entry function '(\w+)' for '(\w+)'[\s\S]*?(\d+) bytes spill stores[\s\S]*?Used (\d+) registers`)

// TestPTXAssembles assembles the module with ptxas for Volta, Ampere and
// Hopper, as the driver's JIT does on a GPU host, and checks that no
// kernel spills and that the memory kernel keeps to 32 registers a thread
// on Ampere and Hopper (8 blocks of 256 threads an SM: calibration's and
// the backend's launch; Volta gets 40, see kernels.ptx).
func TestPTXAssembles(t *testing.T) {
	bin := ptxas(t)
	src := filepath.Join(t.TempDir(), "kernels.ptx")
	if err := os.WriteFile(src, ptx, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"sm_70", "sm_80", "sm_90"} {
		out, err := exec.Command(bin, "-arch="+arch, "-v", src, "-o", filepath.Join(t.TempDir(), arch+".cubin")).CombinedOutput()
		if err != nil {
			t.Errorf("ptxas -arch=%s: %v\n%s", arch, err, out)
			continue
		}
		seen := map[string]bool{}
		for _, m := range reUsed.FindAllStringSubmatch(string(out), -1) {
			seen[m[1]] = true
			if n, _ := strconv.Atoi(m[4]); m[1] == Copy && arch != "sm_70" && n > 32 {
				t.Errorf("%s on %s: %d registers a thread, want at most 32", Copy, arch, n)
			}
			if m[3] != "0" {
				t.Errorf("%s on %s: %s bytes of spill stores, want none (registers held to too few?)", m[1], arch, m[3])
			}
		}
		for _, e := range []string{Spin, Copy, FMA} {
			if !seen[e] {
				t.Errorf("ptxas -arch=%s compiled no %s:\n%s", arch, e, out)
			}
		}
	}
}
