package discover

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/topologies"
)

// TestNVML discovers the machine the test runs on, through the real NVML.
// It runs only with GPUSIM_NVML=1 (a machine with an NVIDIA driver); -v
// shows what was found and NVML's raw NVLink answers.
func TestNVML(t *testing.T) {
	if os.Getenv("GPUSIM_NVML") == "" {
		t.Skip("set GPUSIM_NVML=1 to discover this machine through NVML")
	}
	lib := nvml.New()
	m, err := Discover(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Devices {
		t.Logf("%+v", d)
	}
	t.Logf("notes: %q", m.Notes)
	text, err := m.Topology("this-machine")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text)
	tp, err := topologies.Load("this-machine.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Machine.GPUs) != len(m.Devices) {
		t.Errorf("%d GPUs in the topology, NVML has %d", len(tp.Machine.GPUs), len(m.Devices))
	}
	t.Logf("raw NVLink answers of GPU0:\n%s", rawNVLinks(t, lib))
}

// rawNVLinks lists what NVML answers about GPU0's NVLinks, for the record.
func rawNVLinks(t *testing.T, lib nvml.Interface) string {
	if r := lib.Init(); r != nvml.SUCCESS {
		t.Fatalf("nvml: Init: %v", r)
	}
	defer lib.Shutdown()
	h, r := lib.DeviceGetHandleByIndex(0)
	if r != nvml.SUCCESS {
		t.Fatalf("nvml: DeviceGetHandleByIndex: %v", r)
	}
	var b strings.Builder
	for link := 0; link < nvml.NVLINK_MAX_LINKS; link++ {
		st, r := h.GetNvLinkState(link)
		fmt.Fprintf(&b, "link %d: state %d %v", link, st, r)
		if r == nvml.SUCCESS && st == nvml.FEATURE_ENABLED {
			pci, r := h.GetNvLinkRemotePciInfo(link)
			fmt.Fprintf(&b, ", remote %q %v", busID(pci), r)
			if lib.Extensions().LookupSymbol("nvmlDeviceGetNvLinkRemoteDeviceType") == nil {
				typ, r := h.GetNvLinkRemoteDeviceType(link)
				fmt.Fprintf(&b, ", type %d %v", typ, r)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
