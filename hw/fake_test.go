package hw

import (
	"errors"
	"runtime"
	"testing"

	"gpusim/hw/kernels"
)

// onThread runs fn on a goroutine locked to an OS thread of its own (which
// ends with it) and waits for it. fn reports with t.Error, not t.Fatal: it
// is not the test's goroutine.
func onThread(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		fn()
	}()
	<-done
}

func codeOf(err error) int {
	var ce *CUDAError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return 0
}

// The fake's current context belongs to the OS thread that set it, as in
// CUDA: another thread has none until it sets one, and calls that need one
// fail there with CUDA_ERROR_INVALID_CONTEXT (201).
func TestFakeContextPerThread(t *testing.T) {
	if threadID() == 0 {
		t.Skip("no OS thread ids on this system: the fake's context is process-wide")
	}
	f := NewFake(FakeConfig{Devices: 2})
	var c0, c1 Context
	var s0 Stream
	var e1 Event
	var fn0 Function
	onThread(func() {
		var err error
		if c0, err = f.PrimaryCtxRetain(0); err != nil {
			t.Error(err)
			return
		}
		if c1, err = f.PrimaryCtxRetain(1); err != nil {
			t.Error(err)
			return
		}
		if err := f.SetCurrent(c0); err != nil {
			t.Error(err)
			return
		}
		if s0, err = f.StreamCreate(); err != nil {
			t.Error(err)
			return
		}
		m, err := f.ModuleLoad([]byte("ptx\x00"))
		if err != nil {
			t.Error(err)
			return
		}
		if fn0, err = f.ModuleFunction(m, kernels.Spin); err != nil {
			t.Error(err)
			return
		}
		if err := f.SetCurrent(c1); err != nil {
			t.Error(err)
			return
		}
		if e1, err = f.EventCreate(); err != nil {
			t.Error(err)
			return
		}
		// GPU 0's function and stream, from GPU 1's context: refused.
		if err := f.Launch(fn0, 1, 32, 0, s0, U64(1000)); codeOf(err) != 400 {
			t.Errorf("launch on another context's stream: %v, want code 400", err)
		}
		// An event of GPU 1 recorded on a stream of GPU 0: refused.
		if err := f.EventRecord(e1, s0); codeOf(err) != 400 {
			t.Errorf("event recorded on another context's stream: %v, want code 400", err)
		}
		if err := f.SetCurrent(c0); err != nil {
			t.Error(err)
			return
		}
		if err := f.Launch(fn0, 1, 32, 0, s0, U64(1000)); err != nil {
			t.Errorf("launch in its own context: %v", err)
		}
		f.SetCurrent(0)
	})
	onThread(func() {
		// A new OS thread: no context current, whatever the other set.
		if _, err := f.MemAlloc(1 << 20); codeOf(err) != errNoContext {
			t.Errorf("allocation on a thread with no context: %v, want code %d", err, errNoContext)
		}
		if err := f.Launch(fn0, 1, 32, 0, s0, U64(1000)); codeOf(err) != errNoContext {
			t.Errorf("launch on a thread with no context: %v, want code %d", err, errNoContext)
		}
		if err := f.SetCurrent(c1); err != nil {
			t.Error(err)
			return
		}
		if _, err := f.MemAlloc(1 << 20); err != nil {
			t.Errorf("allocation once a context is current: %v", err)
		}
		// Setting no context takes it away again.
		if err := f.SetCurrent(0); err != nil {
			t.Error(err)
			return
		}
		if _, err := f.StreamCreate(); codeOf(err) != errNoContext {
			t.Errorf("stream created after SetCurrent(0): %v, want code %d", err, errNoContext)
		}
	})
}
