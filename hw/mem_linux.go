//go:build linux

package hw

import (
	"syscall"
	"unsafe"
)

// Pageable is ordinary host memory for pageable copies: an anonymous
// mapping, never the Go heap (the garbage collector must not see the
// driver's pointer into it), touched page by page so first-touch faults are
// not timed.
type Pageable struct{ b []byte }

// AllocPageable maps n bytes of pageable memory.
func AllocPageable(n uint64) (*Pageable, error) {
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
	return &Pageable{b}, nil
}

// Ptr is the memory's address, for the driver.
func (p *Pageable) Ptr() HostPtr { return HostPtr(unsafe.Pointer(&p.b[0])) }

// Bytes is the memory.
func (p *Pageable) Bytes() []byte { return p.b }

// Free unmaps the memory.
func (p *Pageable) Free() error { return syscall.Munmap(p.b) }

// threadID is the calling OS thread's id.
func threadID() int { return syscall.Gettid() }
