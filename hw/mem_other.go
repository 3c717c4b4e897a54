//go:build !linux

package hw

import "errors"

type pageable struct{}

func allocPageable(n uint64) (*pageable, error) {
	return nil, errors.New("pageable host memory: Linux only")
}

func (p *pageable) ptr() HostPtr { return 0 }

func (p *pageable) free() error { return nil }
