//go:build linux

// Package fakecuda builds and drives a stand-in for libcuda.so.1
// (testdata/fakecuda.c) for tests of gpusim's CUDA binding and of what runs
// on it (the hw backend, calibration) on machines without an NVIDIA driver.
// The library has every entry point the binding looks up, with cuda.h's
// signatures; what each does is described at the top of the C file.
package fakecuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Lib is the built library, loaded into this process.
type Lib struct {
	// Path is the library's file, for hw.OpenLibrary.
	Path     string
	set, get uintptr // int fake_set(const char*, int64_t); int64_t fake_get(const char*)
}

var built struct {
	once sync.Once
	lib  *Lib
	skip string // why there is no library where that is no fault: no C compiler
	err  error
}

// Build compiles testdata/fakecuda.c with the system C compiler ($CC, else
// cc, gcc or clang) into a cached shared library, once per process, and
// loads it. It skips the test where there is no C compiler, and fails it
// where the library cannot be built or loaded.
func Build(tb testing.TB) *Lib {
	tb.Helper()
	built.once.Do(func() {
		var err error
		built.lib, built.skip, err = build()
		if err != nil {
			built.err = fmt.Errorf("the C stand-in for libcuda: %w", err)
		}
	})
	switch {
	case built.err != nil:
		tb.Fatal(built.err)
	case built.lib == nil:
		tb.Skip(built.skip)
	}
	return built.lib
}

func build() (*Lib, string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return nil, "", errors.New("cannot find fakecuda's source directory")
	}
	src := filepath.Join(filepath.Dir(self), "testdata", "fakecuda.c")
	text, err := os.ReadFile(src)
	if err != nil {
		return nil, "", err
	}
	cc := os.Getenv("CC")
	if cc == "" {
		for _, c := range []string{"cc", "gcc", "clang"} {
			if _, err := exec.LookPath(c); err == nil {
				cc = c
				break
			}
		}
	}
	if cc == "" {
		return nil, "no C compiler (cc, gcc or clang) to build " + src, nil
	}
	// Cached by the source's hash; built under a temporary name and renamed,
	// so test binaries of several packages building at once do not collide.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(append([]byte(cc+"\x00"), text...))
	dir := filepath.Join(cache, "gpusim-fakecuda", hex.EncodeToString(sum[:8]))
	path := filepath.Join(dir, "libcuda.so.1")
	if _, err := os.Stat(path); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, "", err
		}
		tmp, err := os.CreateTemp(dir, "build-*.so")
		if err != nil {
			return nil, "", err
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-Wall", "-pthread", "-o", tmp.Name(), src).CombinedOutput()
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %v\n%s", cc, src, err, out)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return nil, "", err
		}
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, "", err
	}
	l := &Lib{Path: path}
	if l.set, err = purego.Dlsym(h, "fake_set"); err != nil {
		return nil, "", err
	}
	if l.get, err = purego.Dlsym(h, "fake_get"); err != nil {
		return nil, "", err
	}
	return l, "", nil
}

// Set changes one of the library's settings: "init" (what cuInit returns),
// "mem_limit" (the largest allocation that succeeds), "nparams" (how many
// kernel parameters cuLaunchKernel records), "realclock" (1: events and the
// spin kernel on CLOCK_MONOTONIC).
func (l *Lib) Set(tb testing.TB, what string, v int64) {
	tb.Helper()
	name := append([]byte(what), 0)
	if r, _, _ := purego.SyscallN(l.set, uintptr(unsafe.Pointer(&name[0])), uintptr(v)); int32(r) != 0 {
		tb.Fatalf("fake_set(%q): no such setting", what)
	}
}

// Get reads what the library recorded (see fake_get in the C file); -1 for
// a name it does not know.
func (l *Lib) Get(what string) int64 {
	name := append([]byte(what), 0)
	r, _, _ := purego.SyscallN(l.get, uintptr(unsafe.Pointer(&name[0])))
	return int64(r)
}
