//go:build linux

package hw

import (
	"syscall"
	"unsafe"
)

// pageable is ordinary host memory for pageable copies: an anonymous
// mapping, never the Go heap (the garbage collector must not see the
// driver's pointer into it), touched page by page so first-touch faults are
// not timed.
type pageable struct{ b []byte }

func allocPageable(n uint64) (*pageable, error) {
	if n == 0 {
		n = 1
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return &pageable{b}, nil
}

func (p *pageable) ptr() HostPtr { return HostPtr(unsafe.Pointer(&p.b[0])) }

func (p *pageable) free() error { return syscall.Munmap(p.b) }
