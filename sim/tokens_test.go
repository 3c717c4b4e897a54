package sim

import "testing"

// TestTokenTimes: the first token's time, and the time a token after it
// over the Steps-1 that follow; a token whose sync a deadlock left
// unfinished never came, so there are no times.
func TestTokenTimes(t *testing.T) {
	res := &Result{
		Program: &Program{Work: &Work{Kind: "inference", Steps: 5, FirstToken: "a", LastToken: "b"}},
		Ops:     []OpRecord{{ID: "a", End: 100}, {ID: "x", End: 150}, {ID: "b", End: 500}},
	}
	if first, per, ok := res.TokenTimes(); !ok || first != 100 || per != 100 {
		t.Errorf("got %d, %d, %v; want 100, (500 - 100) / 4 = 100", first, per, ok)
	}
	res.Ops[2].Unfinished = true
	if _, _, ok := res.TokenTimes(); ok {
		t.Error("an unfinished last token has times")
	}
	res.Program.Work.Kind = ""
	res.Ops[2].Unfinished = false
	if _, _, ok := res.TokenTimes(); ok {
		t.Error("a training has token times")
	}
}
