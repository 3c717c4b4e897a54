package sim

import "testing"

type rec struct {
	log *[]int
	id  int
}

func (r rec) Handle() { *r.log = append(*r.log, r.id) }

// TestQueueOrdersByTimeThenScheduling pins the total order of events: time
// first, then the order in which they were scheduled; rescheduling counts as
// scheduling anew.
func TestQueueOrdersByTimeThenScheduling(t *testing.T) {
	var q Queue
	var log []int
	evs := make([]*Event, 6)
	for i := range evs {
		evs[i] = NewEvent(rec{&log, i})
	}
	q.Schedule(evs[0], 10)
	q.Schedule(evs[1], 5)
	q.Schedule(evs[2], 10)
	q.Schedule(evs[3], 5)
	q.Schedule(evs[4], 7)
	q.Schedule(evs[5], 10)
	q.Schedule(evs[0], 10) // moved behind 2 and 5
	q.Cancel(evs[4])
	for e := q.Pop(); e != nil; e = q.Pop() {
		e.h.Handle()
	}
	want := []int{1, 3, 2, 5, 0}
	if len(log) != len(want) {
		t.Fatalf("fired %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("fired %v, want %v", log, want)
		}
	}
	if evs[4].Queued() {
		t.Error("cancelled event still queued")
	}
}
