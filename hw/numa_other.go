//go:build !linux

package hw

// SystemNUMA is this machine's NUMA placement: on systems other than Linux,
// one node, and threads and memory are placed as the OS places them.
func SystemNUMA() NUMA { return oneNode{} }

type oneNode struct{}

func (oneNode) Nodes() int                 { return 1 }
func (oneNode) DeviceNode(_, _, _ int) int { return -1 }
func (oneNode) Pin(int) (func() error, error) {
	return func() error { return nil }, nil
}
