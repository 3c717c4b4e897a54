package sim

import (
	"fmt"
	"slices"
	"strconv"
)

// The texts of the warnings a run gives about syncs and waits that can
// have no effect; Lint gives those its program's text alone shows.
func syncStreamUnfed(stream string) string {
	return fmt.Sprintf("syncs stream %s, to which no op of the program is issued; it returns at once (a misspelt stream name?)", stream)
}

func syncDeviceUnfed(gpu string) string {
	return fmt.Sprintf("syncs device %s, to which no op of the program is issued; it returns at once (a misspelt GPU?)", gpu)
}

func waitUnrecorded(event string) string {
	return fmt.Sprintf("waits on event %s, which has no record issued before the wait; as in CUDA the wait completes at once, which is almost always a bug (where it is meant, as for a buffer free at the start of a loop, record the event once before the loop)", event)
}

func syncUnrecorded(event string) string {
	return fmt.Sprintf("syncs on event %s, which has no record issued before the sync; as in CUDA it returns at once, which is almost always a bug (where it is meant, as for a buffer free at the start of a loop, record the event once before the loop)", event)
}

// warnings collects warnings about ops: the same text from the same place
// on one thread (the ops a repeat makes of one op) is given once, with a
// count of the others.
type warnings struct {
	list []string
	at   map[string]int // index in list, by thread, place and text
	more []int          // per entry of list, the repeats not listed
}

// newWarnings starts a collection with warnings given already (a
// program's), each once.
func newWarnings(first []string) warnings {
	return warnings{list: slices.Clone(first), more: make([]int, len(first))}
}

func (w *warnings) add(thread int, op *Op, text string) {
	key := strconv.Itoa(thread) + "\x00" + op.Where + "\x00" + text
	if i, seen := w.at[key]; seen && op.Where != "" {
		w.more[i]++
		return
	}
	msg := fmt.Sprintf("op %s: ", op.ID) + text
	if op.Where != "" {
		msg = op.Where + ": " + msg
	}
	if w.at == nil {
		w.at = map[string]int{}
	}
	w.at[key] = len(w.list)
	w.more = append(w.more, 0)
	w.list = append(w.list, msg)
}

// done returns the warnings, each with its count of repeats.
func (w *warnings) done() []string {
	for i, n := range w.more {
		if n > 0 {
			times := "times"
			if n == 1 {
				times = "time"
			}
			w.list[i] += fmt.Sprintf(" (and %d more %s from this place)", n, times)
		}
	}
	return w.list
}

// fed says which streams, and which GPUs' streams, some op of p is
// issued to.
func fed(m *Machine, p *Program) (streams, gpus []bool) {
	streams, gpus = make([]bool, len(p.Streams)), make([]bool, len(m.GPUs))
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			op := &p.Threads[ti].Ops[oi]
			switch {
			case op.Kind == OpCollective:
				for _, s := range op.Streams {
					streams[s], gpus[p.Streams[s].GPU] = true, true
				}
			case op.Kind.OnStream():
				streams[op.Stream], gpus[p.Streams[op.Stream].GPU] = true, true
			}
		}
	}
	return streams, gpus
}

// Lint returns the warnings a run of p on m gives that p's text alone
// shows, without running it: syncs on a stream or a GPU to which no op is
// issued, and waits and syncs on an event that no op records. A run gives
// these and more (a wait issued before its event's first record, which
// depends on timing, and deadlocks). p must be valid on m.
func Lint(m *Machine, p *Program) []string {
	streamFed, gpuFed := fed(m, p)
	recorded := make([]bool, len(p.Events))
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			if op := &p.Threads[ti].Ops[oi]; op.Kind == OpEventRecord {
				recorded[op.Event] = true
			}
		}
	}
	var w warnings
	streamWarned := make([]bool, len(p.Streams))
	gpuWarned := make([]bool, len(m.GPUs))
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			op := &p.Threads[ti].Ops[oi]
			switch {
			case op.Kind == OpEventWait && !recorded[op.Event]:
				w.add(ti, op, waitUnrecorded(p.Events[op.Event]))
			case op.Kind == OpSync && op.Sync == SyncEvent && !recorded[op.Event]:
				w.add(ti, op, syncUnrecorded(p.Events[op.Event]))
			case op.Kind == OpSync && op.Sync == SyncStream && !streamFed[op.Stream] && !streamWarned[op.Stream]:
				streamWarned[op.Stream] = true
				w.add(ti, op, syncStreamUnfed(p.StreamName(m, op.Stream)))
			case op.Kind == OpSync && op.Sync == SyncDevice && !gpuFed[op.GPU] && !gpuWarned[op.GPU]:
				gpuWarned[op.GPU] = true
				w.add(ti, op, syncDeviceUnfed(m.GPUs[op.GPU].Name))
			}
		}
	}
	return w.done()
}
