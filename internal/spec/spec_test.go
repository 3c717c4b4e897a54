package spec

import (
	"fmt"
	"strings"
	"testing"
)

// read parses src and reads it as a list of kernels (a mapping with keys
// stream, duration, sm_share each), recording "a kernel needs a duration"
// and "missing stream" where they lack those keys and "negative" for a
// duration that starts with "-", then returns Err's lines.
func read(t *testing.T, src string) []string {
	t.Helper()
	d, root, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := root.Map("kernels")
	kn, _ := top.Get("kernels")
	items, _ := kn.Seq()
	for _, it := range items {
		m, _ := it.Map("stream", "duration", "sm_share")
		if _, ok := m.Get("stream"); !ok {
			it.Errorf(`missing "stream"`)
		}
		dn, ok := m.Get("duration")
		if !ok {
			it.Errorf("a kernel needs a duration")
			continue
		}
		if s, _ := dn.Scalar(); strings.HasPrefix(s, "-") {
			dn.Errorf("%s must not be negative", s)
		}
	}
	if err := d.Err(); err != nil {
		return strings.Split(err.Error(), "\n")
	}
	return nil
}

func sameLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A misspelt key is reported alone: what its mapping lacks because of it
// (the duration) goes, and what it lacks besides (the stream) stays.
func TestAMisspeltKeyHidesWhatItWasMeantToBe(t *testing.T) {
	got := read(t, "kernels:\n  - {durration: 1 us}\n  - {stream: s, sm_shar: 1}\n")
	sameLines(t, got, []string{
		`f.yaml:2:5: kernels[0]: missing "stream"`,
		`f.yaml:2:6: kernels[0].durration: unknown key "durration" (did you mean "duration"?); valid keys here: stream, duration, sm_share`,
		`f.yaml:3:5: kernels[1]: a kernel needs a duration`,
		`f.yaml:3:17: kernels[1].sm_shar: unknown key "sm_shar" (did you mean "sm_share"?); valid keys here: stream, duration, sm_share`,
	})
}

// A key run into its value for want of a space after the colon is said
// so, alone (the key it hides is not also missing).
func TestKeyWithoutASpace(t *testing.T) {
	got := read(t, "kernels:\n  - {stream:s, duration: 1 us}\n")
	sameLines(t, got, []string{
		`f.yaml:2:6: kernels[0].stream:s: unknown key "stream:s" (a space after the ':' makes "stream" the key and "s" its value); valid keys here: stream, duration, sm_share`,
	})
	d, root, err := Parse("f.yaml", []byte("kernels:\n  -stream: s\n"))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := root.Map("kernels")
	kn, _ := top.Get("kernels")
	kn.Seq()
	if err := d.Err(); err == nil || err.Error() != `f.yaml:2:3: kernels: expected a list, got a mapping ("-stream": a space after the '-' makes a list item)` {
		t.Errorf("got %v", err)
	}
}

// The same problem on the same field of several list items is one line
// with the other lines; on two items of one line, with line:col; through
// an alias (one place), with the paths. Different fields with the same
// message stay apart.
func TestRepeatedProblemsAreOneLine(t *testing.T) {
	got := read(t, "kernels:\n  - {stream: s, duration: -1 us}\n  - {stream: s, duration: -1 us}\n  - {stream: s, duration: -1 us}\n")
	sameLines(t, got, []string{`f.yaml:2:27: kernels[0].duration: -1 us must not be negative (and at 2 more places: lines 3, 4)`})

	got = read(t, "kernels: [{stream: s, duration: -1 us}, {stream: s, duration: -1 us}]\n")
	sameLines(t, got, []string{`f.yaml:1:33: kernels[0].duration: -1 us must not be negative (and at 1 more place: 1:63)`})

	got = read(t, "kernels:\n  - &k {stream: s, duration: -1 us}\n  - *k\n  - *k\n")
	sameLines(t, got, []string{`f.yaml:2:30: kernels[0].duration: -1 us must not be negative (and at 2 more places: kernels[1].duration, kernels[2].duration)`})

	got = read(t, "kernels:\n  - {duration: 1 us}\n  - {stream: s}\n")
	sameLines(t, got, []string{
		`f.yaml:2:5: kernels[0]: missing "stream"`,
		`f.yaml:3:5: kernels[1]: a kernel needs a duration`,
	})
}

func TestWrongKind(t *testing.T) {
	scenarioKeys, topologyKeys := ScenarioKeys, TopologyKeys
	for _, tc := range []struct {
		src, want string
	}{
		{"name: t\nhosts: []\ngpus: []\nlinks: []\n", "f.yaml:1:1: this is a topology, not a scenario (its keys include hosts, gpus, links); run a scenario"},
		{"name: s\ntraining: {gpus: 8}\n", ""},          // a generator's scenario
		{"name: s\nvars: {gpus: 8}\nthreads: []\n", ""}, // a var named gpus
		{"name: s\nthreads: []\ngpus: []\n", ""},        // a scenario with a misplaced key: its own error
		{"- a list\n", ""},                              // not a mapping: Parse says so
		{"name: t\ngpus: [{name: g}]\n", "f.yaml:1:1: this is a topology, not a scenario (its keys include gpus); run a scenario"},
	} {
		_, root, err := Parse("f.yaml", []byte(tc.src))
		if err != nil {
			if tc.want != "" {
				t.Errorf("%q: %v", tc.src, err)
			}
			continue
		}
		got := ""
		if err := root.WrongKind("a scenario", "a topology", "run a scenario", scenarioKeys, topologyKeys); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.src, got, tc.want)
		}
	}
}

// A syntax error is reported where it is: the parser's own line is where
// the construct it was in began, counted from 0 for some errors, and it
// gives no column.
func TestSyntaxErrorsPointAtTheirLine(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unclosed brace", "a: 1\nb:\n  - {x: 1\n  - y\n", `f.yaml:3:5: not valid YAML: did not find expected ',' or '}' (the { here is not closed)`},
		{"unclosed bracket", "a: [1, 2\nb: 3\n", `f.yaml:1:4: not valid YAML: did not find expected ',' or ']' (the [ here is not closed)`},
		{"wrong closer", "a: [{x: 1]\n", `f.yaml:1:10: not valid YAML: did not find expected ',' or '}' (this ] closes a {)`},
		{"mis-indented item", "a:\n  - x: 1\n  - y: 2\n - z: 3\n", `f.yaml:4:2: not valid YAML: did not find expected key`},
		{"unclosed quote", "a: 1\nb: \"text\nc: 2\n", `f.yaml:2:4: not valid YAML: found unexpected end of stream (the " here is not closed)`},
		{"tab", "a: 1\n\tb: 2\n", `f.yaml:2:1: not valid YAML: found a tab character that violates indentation (a tab indents this line: YAML indents with spaces)`},
		{"tab before a list item", "a:\n\t- b\n", `f.yaml:2:1: not valid YAML: found character that cannot start any token (a tab indents this line: YAML indents with spaces)`},
		{"an apostrophe in a plain value", "description: Rank 0's copy: slow\n", `f.yaml:1:14: not valid YAML: mapping values are not allowed in this context (a value holding ": " wants quotes: "Rank 0's copy: slow")`},
		// A plain value holding ": ": placed at the value, in a list item too.
		{"a colon in a value", "name: s\ndescription: a: b\n", `f.yaml:2:14: not valid YAML: mapping values are not allowed in this context (a value holding ": " wants quotes: "a: b")`},
		{"a colon in an item's value", "ops:\n  - id: x\n    note: step: one # c\n", `f.yaml:3:11: not valid YAML: mapping values are not allowed in this context (a value holding ": " wants quotes: "step: one")`},
		// A colon in a value on a line indented deeper: either may be the
		// fault, as the hint says, at the line's start.
		{"a colon in a value, indented deeper", "name: s\n  description: a: b\n", `f.yaml:2:3: not valid YAML: mapping values are not allowed in this context (a line indented deeper than the key before it, or a value holding ": " that wants quotes)`},
		// A long value is cut in the hint.
		{"a long value with a colon", "description: " + strings.Repeat("x", 70) + ": y\n", `f.yaml:1:14: not valid YAML: mapping values are not allowed in this context (a value holding ": " wants quotes: "` + strings.Repeat("x", 57) + `...")`},
		// A closing bracket that closes nothing, after a closed flow or
		// alone; one closing a list opened lines above is not that.
		{"a stray brace", "ops:\n  - kernel: {stream: s, duration: 1 us}}\n", `f.yaml:2:40: not valid YAML: did not find expected key (this } closes nothing: one too many, or its opening { is missing)`},
		// A bracket in a plain value is a character: the fault here is
		// the indentation.
		{"a bracket in a plain value", "a:\n  b: 1\n c: x}\n", `f.yaml:3:2: not valid YAML: did not find expected key`},
		{"a stray bracket", "a: 1\nb: [1, 2]]\n", `f.yaml:2:10: not valid YAML: did not find expected key (this ] closes nothing: one too many, or its opening [ is missing)`},
		{"a no-break space in the indentation", "a:\n\u00a0 - b: 1\n    c: 2\n", `f.yaml:2:1: not valid YAML: mapping values are not allowed in this context (a no-break space (U+00A0) indents this line: YAML indents with spaces)`},
		{"a YAML 1.2 directive", "%YAML 1.2\n---\na: 1\n", `f.yaml:1:1: not valid YAML: found incompatible YAML document (%YAML 1.2: gpusim reads YAML without a version directive: remove this line)`},
		{"indented deeper", "name: x\n  topology: y\n", `f.yaml:2:3: not valid YAML: mapping values are not allowed in this context (a line indented deeper than the key before it, or a value holding ": " that wants quotes)`},
		{"an apostrophe before the bracket", "a: 1\nthreads: [it's, b\n", `f.yaml:2:10: not valid YAML: did not find expected ',' or ']' (the [ here is not closed)`},
		{"an escaped quote", "a: 1\nb: \"abc\\\"def\n", `f.yaml:2:4: not valid YAML: found unexpected end of stream (the " here is not closed)`},
		{"a doubled single quote", "a: 1\nb: 'it''s\n", `f.yaml:2:4: not valid YAML: found unexpected end of stream (the ' here is not closed)`},
		{"columns count characters", "a: é\nb: [é, {y: 1\n", `f.yaml:2:8: not valid YAML: did not find expected ',' or '}' (the { here is not closed)`},
		// A flow mapping over two lines is valid: the error is after it.
		{"after a valid multi-line flow", "a: {x: 1,\n  y: 2}\nb: 1\nc: [3\n", `f.yaml:4:4: not valid YAML: did not find expected ',' or ']' (the [ here is not closed)`},
		// A bracket left open inside a flow collection over many lines:
		// the error is where that bracket opened, not where the outer
		// collection did.
		{"unclosed brace in a multi-line list", "a: 1\nops: [\n  {x: 1},\n  {x: 2\n  {x: 3},\n]\n", `f.yaml:4:3: not valid YAML: did not find expected ',' or '}' (the { here is not closed)`},
		{"after a comment, in a multi-line list", "ops: [\n  {x: 1}, # one\n  {x: 2 # two\n  {x: 3},\n]\n", `f.yaml:3:3: not valid YAML: did not find expected ',' or '}' (the { here is not closed)`},
		// A bracket closed by one of the other kind on a later line: the
		// error is that closer, and the message says what it closes.
		{"a wrong closer later in a multi-line list", "a: 1\nops: [\n  {x: 1},\n  {x: {y: 2}\n]\n", `f.yaml:5:1: not valid YAML: did not find expected ',' or '}' (this ] closes the { at 4:3)`},
		{"a wrong closer of an earlier line's bracket", "ops: [\n  {x: 1,\n   y: [{z: 1}]]}\n]\n", `f.yaml:3:15: not valid YAML: did not find expected ',' or '}' (this ] closes the { at 2:3)`},
		{"a wrong closer of its line's bracket", "ops: [\n  {x: 1,\n   y: [{z: 1]]}\n]\n", `f.yaml:3:13: not valid YAML: did not find expected ',' or '}' (this ] closes a {)`},
		{"unclosed brace early in a long list", "ops: [\n  {x: 1},\n  {x: 2\n" + strings.Repeat("  {x: 3},\n", 300) + "]\n", `f.yaml:3:3: not valid YAML: did not find expected ',' or '}' (the { here is not closed)`},
		// Early in a 1 MB file: the budget of parses is not all spent on
		// the last lines (it was, and the parser's line was reported).
		{"early in a 1 MB file", "a: 1\nb: [1}\n" + strings.Repeat("c: 2 # padding padding padding padding padding padding\n", 20000), `f.yaml:2:6: not valid YAML: did not find expected ',' or ']' (this } closes a [)`},
		// A var unquoted inside a flow mapping or list: where it is, and
		// that it wants quotes; quoted, or in a comment, it is not the
		// error.
		{"an unquoted var in a flow mapping", "vars: {t: 1 ms}\nops:\n  - host: {duration: ${t}}\n", `f.yaml:3:22: not valid YAML: did not find expected ',' or '}' (a ${var} inside { } or [ ] needs quotes, "${...}": there YAML reads its { as a mapping's)`},
		{"an unquoted var in a flow list", "a: [1, \"${x}\", ${y}]\n", `f.yaml:1:16: not valid YAML: did not find expected ',' or ']' (a ${var} inside { } or [ ] needs quotes, "${...}": there YAML reads its { as a mapping's)`},
		{"a var in a comment after an unclosed brace", "a: {x: 1 # was ${t}\nb: 1\n", `f.yaml:1:4: not valid YAML: did not find expected ',' or '}' (the { here is not closed)`},
		{"a var after a doubled single quote", "a: {x: 'it''s ${t}', y: ${u}}\n", `f.yaml:1:25: not valid YAML: did not find expected ',' or '}' (a ${var} inside { } or [ ] needs quotes, "${...}": there YAML reads its { as a mapping's)`},
		{"a quoted var beside an unclosed brace", "a: {x: \"${t}\"\nb: 1\n", `f.yaml:1:4: not valid YAML: did not find expected ',' or '}' (the { here is not closed)`},
		// Far from the end: found by bisection.
		{"early in a long file", "a: 1\nb: [1\n" + strings.Repeat("c: 2\n", 200), `f.yaml:2:4: not valid YAML: did not find expected ',' or ']' (the [ here is not closed)`},
	} {
		_, _, err := Parse("f.yaml", []byte(tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// A problem at a scalar that took vars' values names where each value was
// given, once per var, and only the vars that have a place; a problem at a
// scalar with no vars, or at the mapping above, names none.
func TestProblemsNameWhereAVarWasGiven(t *testing.T) {
	d, root, err := Parse("f.yaml", []byte("a: ${x}${x}\nb: ${x}-${y}-${z}\nc: plain\n"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"x": "1", "y": "2", "z": "3"}
	from := map[string]string{"x": "sweep: at 9:9", "y": "--set"}
	root.Substitute(vars, []string{"x", "y", "z"}, nil, from)
	m, _ := root.Map("a", "b", "c")
	for _, k := range []string{"a", "b", "c"} {
		n, _ := m.Get(k)
		s, _ := n.Scalar()
		n.Errorf("bad %s", s)
	}
	root.Errorf("top")
	want := []string{
		"f.yaml:1:1: top",
		"f.yaml:1:4: a: bad 11 (${x} from sweep: at 9:9)",
		"f.yaml:2:4: b: bad 1-2-3 (${x} from sweep: at 9:9, ${y} from --set)",
		"f.yaml:3:4: c: bad plain",
	}
	got := strings.Split(d.Err().Error(), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A file holds one YAML document: a second, which the reader would ignore
// whatever it says (even invalid YAML), is an error at its --- line; a ---
// before the first, or an empty document at the end, is not.
func TestOneDocumentPerFile(t *testing.T) {
	const second = "a second YAML document starts here: a topology or scenario file holds one (remove it and what follows, or make the two one document)"
	for _, tc := range []struct{ name, src, want string }{
		{"a second document", "a: 1\n---\nb: 2\n", "f.yaml:2:1: " + second},
		{"an invalid second document", "# first\na: 1\nb: 2\n--- # two\ngarbage: [unclosed\n", "f.yaml:4:1: " + second},
		{"a --- before the first", "# c\n---\na: 1\n", ""},
		{"after a directive", "%YAML 1.1\n---\na: 1\n---\nb: 2\n", "f.yaml:4:1: " + second},
		{"after an end marker", "a: 1\n...\n# two\nb: 2\n", "f.yaml:4:1: " + second},
		{"an empty document at the end", "a: 1\n---\n", ""},
		{"an end marker", "---\na: 1\n...\n", ""},
	} {
		_, _, err := Parse("f.yaml", []byte(tc.src))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Merge keys, as YAML 1.1 has them: <<: *anchor adds the anchored
// mapping's keys that the mapping does not set itself; with a list, the
// first mapping that has a key wins; merged mappings may merge in turn.
func TestMergeKeys(t *testing.T) {
	src := `base: &b {a: 1, b: 2}
more: &m {b: 20, c: 30, <<: {d: 40}}
one: {<<: *b, a: 10}
two: {<<: [*m, *b], e: 5}
bad: {<<: 3}
`
	d, root, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := root.Map("base", "more", "one", "two", "bad")
	read := func(key string, valid ...string) string {
		n, _ := top.Get(key)
		m, _ := n.Map(valid...)
		var out []string
		for _, k := range m.Keys() {
			v, _ := m.Get(k)
			s, _ := v.Scalar()
			out = append(out, k+"="+s)
		}
		return strings.Join(out, " ")
	}
	if got, want := read("one", "a", "b"), "a=10 b=2"; got != want {
		t.Errorf("one: %s, want %s", got, want)
	}
	if got, want := read("two", "a", "b", "c", "d", "e"), "e=5 b=20 c=30 d=40 a=1"; got != want {
		t.Errorf("two: %s, want %s", got, want)
	}
	read("bad", "x")
	want := `f.yaml:5:7: bad: << merges a mapping (<<: *anchor) or a list of them, not "3"`
	if err := d.Err(); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// A file with thousands of problems reports the first MaxProblems and
// counts the rest on one more line, however often Err is asked; a message
// quoting a huge value keeps its start and its end.
func TestProblemsAreBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "k%d: 1\n", i)
	}
	d, root, err := Parse("f.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	root.Map("name")
	for round := 0; round < 2; round++ {
		lines := strings.Split(d.Err().Error(), "\n")
		if len(lines) != 51 || lines[50] != "f.yaml:51:1: and 950 more problems from here on; fix those above first" {
			t.Fatalf("round %d: %d lines, the last %q", round, len(lines), lines[len(lines)-1])
		}
	}
	long := strings.Repeat("x", 100000)
	e := &Error{File: "f.yaml", Line: 1, Col: 1, Msg: fmt.Sprintf("%q is not valid: use letters", long)}
	got := e.Error()
	want := "f.yaml:1:1: \"" + strings.Repeat("x", 299) + " ...(99428 characters)... " + strings.Repeat("x", 273) + "\" is not valid: use letters"
	if got != want {
		t.Errorf("got %d characters: %.80q...", len(got), got)
	}
}

// A mapping merged into another is read once however often it is named:
// a mapping that merges itself twice over, or twelve levels of mappings
// each merging the level below ten times, read in an instant, with the
// keys they bring.
func TestMergeKeysReadEachMappingOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("self: &h {name: cpu0, <<: [*h, *h]}\nl0: &a0 {k0: 0}\n")
	for k := 1; k <= 12; k++ {
		fmt.Fprintf(&b, "l%d: &a%d {k%d: %d, <<: [%s]}\n", k, k, k, k, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", k-1), 10), ", "))
	}
	d, root, err := Parse("f.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := 0; k <= 12; k++ {
		keys = append(keys, fmt.Sprintf("l%d", k))
	}
	top, _ := root.Map(append(keys, "self")...)
	n, _ := top.Get("self")
	self, _ := n.Map("name")
	if got := strings.Join(self.Keys(), " "); got != "name" {
		t.Errorf("self: keys %q", got)
	}
	n, _ = top.Get("l12")
	var valid []string
	for k := 12; k >= 0; k-- {
		valid = append(valid, fmt.Sprintf("k%d", k))
	}
	m, _ := n.Map(valid...)
	if got, want := strings.Join(m.Keys(), " "), strings.Join(valid, " "); got != want {
		t.Errorf("l12: keys %q, want %q", got, want)
	}
	if err := d.Err(); err != nil {
		t.Error(err)
	}
}

// MapAny takes any key, merged ones too; Map with the same keys listed
// would have called the merged ones unknown before.
func TestMapAnyTakesMergedKeys(t *testing.T) {
	d, root, err := Parse("f.yaml", []byte("vars: &v {a: 1, b: 2}\nsems: {<<: *v, c: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := root.Map("vars", "sems")
	n, _ := top.Get("sems")
	m, _ := n.MapAny()
	if got := strings.Join(m.Keys(), " "); got != "c a b" {
		t.Errorf("keys %q, want c a b", got)
	}
	if err := d.Err(); err != nil {
		t.Error(err)
	}
}

// TestClonesAreSubstitutedApart substitutes two copies of one parsed file
// with different values: each copy reads its own, the parsed file keeps
// its ${x}, an alias reads its anchor's value in its own copy, and a
// problem recorded in one copy is that copy's alone.
func TestClonesAreSubstitutedApart(t *testing.T) {
	src := "a: &anchor {v: \"${x}\", w: plain}\nb: *anchor\nc: [1, 2, \"${x}-${y}\"]\nd: {e: fixed}\n"
	_, root, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	clone := root.Cloner()
	read := func(r Node) (av, bv, c2, e string) {
		top, _ := r.MapAny()
		get := func(k, sub string) string {
			n, _ := top.Get(k)
			m, _ := n.MapAny()
			v, _ := m.Get(sub)
			s, _ := v.Scalar()
			return s
		}
		cn, _ := top.Get("c")
		items, _ := cn.Seq()
		c2, _ = items[2].Scalar()
		return get("a", "v"), get("b", "v"), c2, get("d", "e")
	}
	d1, r1 := clone()
	d2, r2 := clone()
	r1.Substitute(map[string]string{"x": "one", "y": "1"}, []string{"x", "y"}, nil, nil)
	r2.Substitute(map[string]string{"x": "two"}, []string{"x"}, nil, nil)
	for _, c := range []struct {
		name       string
		r          Node
		a, b, c, e string
	}{
		{"first copy", r1, "one", "one", "one-1", "fixed"},
		{"second copy", r2, "two", "two", "two-${y}", "fixed"},
		{"parsed file", root, "${x}", "${x}", "${x}-${y}", "fixed"},
	} {
		if a, b, c2, e := read(c.r); a != c.a || b != c.b || c2 != c.c || e != c.e {
			t.Errorf("%s: a.v %q, b.v %q, c[2] %q, d.e %q; want %q, %q, %q, %q", c.name, a, b, c2, e, c.a, c.b, c.c, c.e)
		}
	}
	if err := d1.Err(); err != nil {
		t.Errorf("first copy: %v", err)
	}
	if err := d2.Err(); err == nil || !strings.Contains(err.Error(), "${y} is not defined") {
		t.Errorf("second copy: %v, want ${y} is not defined", err)
	}
	// What refers to no var is shared rather than copied.
	top1, _ := r1.MapAny()
	top0, _ := root.MapAny()
	d1n, _ := top1.Get("d")
	d0n, _ := top0.Get("d")
	if d1n.Raw() != d0n.Raw() {
		t.Error("d, which refers to no var, was copied")
	}
}

// A byte count written out whole is read exactly, up to 2^62 - 1: as a
// float, 2^53 + 1 reads as 2^53, and 4611686018427387903 rounds to 2^62,
// which sizes must stay under;
// one too small for a float is no more whole than one that is not.
func TestByteCountReadsWholeCountsExactly(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int64
		err  string
	}{
		{"4611686018427387903", 1<<62 - 1, ""},
		{"9007199254740993", 1<<53 + 1, ""}, // a float reads 2^53
		{"4611686018427387904", 0, "is too large: sizes must be under 4 EiB"},
		{"4 EiB", 0, "is too large: sizes must be under 4 EiB"},
		{"1 MiB", 1 << 20, ""},
		{"0 GiB", 0, ""},
		{"0.000e-5 GiB", 0, ""},
		// Below the smallest float: 0, but not written as 0.
		{"1e-400 GiB", 0, "is not a whole number of bytes"},
		{"1e-300 GiB", 0, "is not a whole number of bytes"},
	} {
		d, root, err := Parse("f.yaml", []byte("bytes: "+c.s+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		m, _ := root.Map("bytes")
		bn, _ := m.Get("bytes")
		got, ok := bn.ByteCount(NonNeg)
		switch {
		case c.err != "":
			if ok || d.Err() == nil || !strings.Contains(d.Err().Error(), c.err) {
				t.Errorf("%s: %d, %v; want the error %q", c.s, got, d.Err(), c.err)
			}
		case !ok || got != c.want:
			t.Errorf("%s: %d, %v; want %d", c.s, got, d.Err(), c.want)
		}
	}
}

// A no-break space is named where it indents the line of a syntax error
// or the one before it, not where a block scalar above holds it as text
// (pasted into a description); a quoted key that starts with a plain
// space is an unknown key with its suggestion, not an indentation.
func TestOddSpacesNamedOnlyWhereTheyIndent(t *testing.T) {
	d, _, err := Parse("f.yaml", []byte("description: |\n  text\n  \u00a0indented text\nkernels: [{stream: s\nb: 1\n"))
	if err == nil || strings.Contains(err.Error(), "no-break") || !strings.HasPrefix(err.Error(), "f.yaml:4:") {
		t.Errorf("an unclosed bracket below a description holding a no-break space: %v, want the bracket's error at line 4", err)
	}
	_ = d
	got := read(t, "kernels:\n  - {\" stream\": s, duration: 1 us}\n")
	if len(got) != 1 || strings.Contains(got[0], "indents") || !strings.Contains(got[0], `did you mean "stream"?`) {
		t.Errorf("a quoted key with a leading space: %q, want an unknown key with its suggestion", got)
	}
}
