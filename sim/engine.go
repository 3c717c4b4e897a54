package sim

import "fmt"

// engine owns the clock and the event queue of one run.
type engine struct {
	q      Queue
	now    Time
	events uint64 // events fired
	err    error  // first fatal error (time overflow)
	// culprit is what would have ended past MaxTime (an event's handler or
	// a flow), and rate the flow's rate then, for the run to name them.
	culprit any
	rate    float64
	// progress, when set, is called every progressEvery events.
	progress func(now Time, events uint64)
}

// progressEvery is how many events pass between calls of a run's
// progress: about a tenth of a second of the loop.
const progressEvery = 1 << 20

// at schedules ev at absolute time t.
func (e *engine) at(ev *Event, t Time) { e.q.Schedule(ev, t) }

// after schedules ev d after now, recording an error instead of overflowing.
func (e *engine) after(ev *Event, d Time) {
	if d < 0 {
		panic(fmt.Sprintf("sim: negative delay %d", d))
	}
	if d > MaxTime-e.now {
		e.overflow(float64(d), ev.h, 0)
		return
	}
	e.q.Schedule(ev, e.now+d)
}

// run fires events in (time, sequence) order until the queue is empty or an
// error is recorded.
func (e *engine) run() {
	if e.progress != nil {
		e.runReporting()
		return
	}
	for e.err == nil {
		ev := e.q.Pop()
		if ev == nil {
			return
		}
		e.now = ev.at
		e.events++
		ev.h.Handle()
	}
}

// overflow records that who (an event's handler, or a flow running at
// rate) would end ps picoseconds after now, past MaxTime.
func (e *engine) overflow(ps float64, who any, rate float64) {
	if e.err != nil {
		return
	}
	e.err = &OverflowError{After: ps * 1e-12, At: e.now, What: "something"}
	e.culprit, e.rate = who, rate
}

// OverflowError reports a run stopped because something would end past
// the simulated time range (MaxTime, about 106 days).
type OverflowError struct {
	// Where is the position ("file:line:col") of the op that would end
	// past the range, if known.
	Where string
	// What names it ("op main/2 (kernel)"), and Why says what limits its
	// rate, if known ("moving at 1 B/s, over link:gpu0-cpu0 gpu0->cpu0
	// (1 B/s)"), else is empty.
	What, Why string
	// Transfer is set where a transfer (a copy's or a collective's) would
	// end past the range: a bandwidth may be what is wrong.
	Transfer bool
	// After is how long after At it would end, in seconds (a float: it
	// may be past what Time counts).
	After float64
	At    Time
}

func (e *OverflowError) Error() string {
	msg := fmt.Sprintf("simulated time overflows its range (at most %d days): %s would end %.3g s after %s", int64(MaxTime.Seconds()/86400), e.What, e.After, e.At)
	if e.Why != "" {
		msg += ", " + e.Why
	}
	msg += "; a duration or size is too large"
	if e.Transfer {
		msg += ", or a bandwidth too small"
	}
	if e.Where != "" {
		msg = e.Where + ": " + msg
	}
	return msg
}

// runReporting is run calling progress every progressEvery events; a loop
// of its own, so that runs without it pay nothing.
func (e *engine) runReporting() {
	for e.err == nil {
		ev := e.q.Pop()
		if ev == nil {
			return
		}
		e.now = ev.at
		e.events++
		ev.h.Handle()
		if e.events%progressEvery == 0 {
			e.progress(e.now, e.events)
		}
	}
}
