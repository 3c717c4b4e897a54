package sim

import "fmt"

// engine owns the clock and the event queue of one run.
type engine struct {
	q      Queue
	now    Time
	events uint64 // events fired
	err    error  // first fatal error (time overflow)
}

// at schedules ev at absolute time t.
func (e *engine) at(ev *Event, t Time) { e.q.Schedule(ev, t) }

// after schedules ev d after now, recording an error instead of overflowing.
func (e *engine) after(ev *Event, d Time) {
	if d < 0 {
		panic(fmt.Sprintf("sim: negative delay %d", d))
	}
	if d > MaxTime-e.now {
		e.overflow(d, 0)
		return
	}
	e.q.Schedule(ev, e.now+d)
}

// run fires events in (time, sequence) order until the queue is empty or an
// error is recorded.
func (e *engine) run() {
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

// overflow records that something would end past MaxTime: d after now, or
// ps picoseconds after now when d is zero.
func (e *engine) overflow(d Time, ps float64) {
	if e.err != nil {
		return
	}
	what := d.String()
	if d == 0 {
		what = fmt.Sprintf("%.3g s", ps*1e-12)
	}
	e.err = fmt.Errorf("simulated time overflows its range (at most %d days): something would end %s after %s; a duration or size is too large", int64(MaxTime.Seconds()/86400), what, e.now)
}
