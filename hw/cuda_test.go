//go:build linux

package hw

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestBindMissingSymbol: a driver without one of the symbols gpusim calls
// gives an error naming it, and nothing is registered half-way.
func TestBindMissingSymbol(t *testing.T) {
	c := &cuda{}
	err := c.bind(func(name string) (uintptr, error) {
		if name == "cuMemAlloc_v2" {
			return 0, errors.New("undefined symbol")
		}
		return 0x1234, nil
	})
	if !IsUnavailable(err) || !strings.Contains(err.Error(), "cuMemAlloc_v2") {
		t.Fatalf("error %v, want an UnavailableError naming cuMemAlloc_v2", err)
	}
	if c.cuInit != 0 {
		t.Error("cuInit was registered although binding failed")
	}
}

// TestBindFallsBack: where the versioned symbol is missing (an older
// driver), the binding takes the next name, and only then.
func TestBindFallsBack(t *testing.T) {
	var asked []string
	c := &cuda{}
	err := c.bind(func(name string) (uintptr, error) {
		asked = append(asked, name)
		if name == "cuEventElapsedTime_v2" {
			return 0, errors.New("undefined symbol")
		}
		return 0x1234, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(asked, " ")
	if !strings.Contains(got, "cuEventElapsedTime_v2 cuEventElapsedTime ") {
		t.Errorf("lookups %s: want cuEventElapsedTime after cuEventElapsedTime_v2", got)
	}
	if strings.Contains(got, "cuDevicePrimaryCtxRelease ") {
		t.Errorf("looked up cuDevicePrimaryCtxRelease although _v2 was found")
	}
}

// TestOpenWithoutDriver runs where no NVIDIA driver is installed (CI): Open
// says so in one line, as an UnavailableError, and does not crash.
func TestOpenWithoutDriver(t *testing.T) {
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64"} {
		if _, err := os.Stat(dir + "/" + Library); err == nil {
			t.Skipf("%s/%s exists: this machine has an NVIDIA driver", dir, Library)
		}
	}
	d, err := Open()
	if err == nil {
		d.Close()
		t.Skip("a CUDA driver opened: this machine has a GPU")
	}
	if !IsUnavailable(err) || !strings.Contains(err.Error(), "no NVIDIA driver found") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: want one line saying no NVIDIA driver found", err)
	}
}

func TestCUDAErrorNames(t *testing.T) {
	e := &CUDAError{Call: "cuMemAlloc_v2", Code: 2}
	if got, want := e.Error(), "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = &CUDAError{Call: "cuModuleLoadDataEx", Code: 218, Log: "ptxas fatal"}
	if got := e.Error(); !strings.Contains(got, "CUDA_ERROR_INVALID_PTX") || !strings.Contains(got, "ptxas fatal") {
		t.Errorf("got %q", got)
	}
	// A kernel that failed as it ran surfaces at a later call: the error
	// says so, whichever call it is and whether or not the driver named it.
	for _, e := range []*CUDAError{
		{Call: "cuStreamSynchronize", Code: 719},
		{Call: "cuStreamSynchronize", Code: 719, Name: "CUDA_ERROR_LAUNCH_FAILED"},
	} {
		want := "cuStreamSynchronize: CUDA_ERROR_LAUNCH_FAILED (719): a kernel failed on the GPU (CUDA reports it at a call after the failed kernel's launch, and every CUDA call after it in this process fails)"
		if got := e.Error(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	e = &CUDAError{Call: "cuMemcpyDtoH_v2", Code: 700}
	if got := e.Error(); !strings.HasPrefix(got, "cuMemcpyDtoH_v2: CUDA_ERROR_ILLEGAL_ADDRESS (700): a kernel failed on the GPU") {
		t.Errorf("got %q", got)
	}
}
