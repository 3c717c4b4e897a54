//go:build !linux

package hw

import "errors"

// Pageable is ordinary host memory (Linux only).
type Pageable struct{}

// AllocPageable fails off Linux.
func AllocPageable(n uint64) (*Pageable, error) {
	return nil, errors.New("pageable host memory: Linux only")
}

// Ptr is zero off Linux.
func (p *Pageable) Ptr() HostPtr { return 0 }

// Bytes is nil off Linux.
func (p *Pageable) Bytes() []byte { return nil }

// Free does nothing off Linux.
func (p *Pageable) Free() error { return nil }

// threadID is the calling OS thread's id (off Linux, unknown: 0).
func threadID() int { return 0 }
