package kernels

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// These tests cannot compile the PTX (no ptxas or GPU here); they check its
// structure: the entries and their parameters, register declarations, branch
// labels, braces and the module header. TestLintCatches makes sure each check
// can fail.

// wantParams is the parameter type list of each entry, in order.
var wantParams = map[string][]string{
	Spin: {"u64", "u64"},
	Copy: {"u64", "u64", "u64"},
	FMA:  {"u64", "u32"},
}

// regClass is the declared type each register prefix must have.
var regClass = map[string]string{
	"p":  "pred",
	"r":  "b32",
	"rd": "b64",
	"f":  "f32",
}

// specialRegs are the PTX special registers the kernels may read.
var specialRegs = map[string]bool{
	"tid": true, "ntid": true, "ctaid": true, "nctaid": true, "globaltimer": true,
}

type param struct{ typ, name string }

type entry struct {
	name   string
	params []param
	body   []string // lines between the entry's braces, comments removed
}

var (
	reBlockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	reLineComment  = regexp.MustCompile(`//[^\n]*`)
	reEntryHead    = regexp.MustCompile(`\.entry\s+([A-Za-z_$][\w$]*)\s*\(`)
	reParam        = regexp.MustCompile(`^\.param\s+\.(\w+)\s+([A-Za-z_$][\w$]*)$`)
	reRegDecl      = regexp.MustCompile(`^\.reg\s+\.(\w+)\s+%([A-Za-z_]+)<(\d+)>\s*;$`)
	reRegUse       = regexp.MustCompile(`%([A-Za-z_]+)(\d*)`)
	reLabelDef     = regexp.MustCompile(`^(\$?[A-Za-z_][\w$]*):$`)
	reBranch       = regexp.MustCompile(`\bbra(?:\.uni)?\s+(\$?[A-Za-z_][\w$]*)\s*;`)
	reLdParam      = regexp.MustCompile(`\bld\.param\.(\w+)\s+%\w+\s*,\s*\[\s*([A-Za-z_$][\w$]*)\s*\]`)
)

func stripComments(src string) string {
	src = reBlockComment.ReplaceAllString(src, "")
	return reLineComment.ReplaceAllString(src, "")
}

// parseEntries splits the (comment-free) module into entries. Problems that
// prevent parsing an entry are returned as errors.
func parseEntries(src string) ([]entry, []string) {
	var ents []entry
	var errs []string
	for _, m := range reEntryHead.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		rest := src[m[1]:]
		closeParen := strings.IndexByte(rest, ')')
		if closeParen < 0 {
			errs = append(errs, fmt.Sprintf("%s: unterminated parameter list", name))
			continue
		}
		e := entry{name: name}
		if plist := strings.TrimSpace(rest[:closeParen]); plist != "" {
			for _, p := range strings.Split(plist, ",") {
				p = strings.Join(strings.Fields(p), " ")
				pm := reParam.FindStringSubmatch(p)
				if pm == nil {
					errs = append(errs, fmt.Sprintf("%s: bad parameter %q", name, p))
					continue
				}
				e.params = append(e.params, param{typ: pm[1], name: pm[2]})
			}
		}
		rest = rest[closeParen+1:]
		open := strings.IndexByte(rest, '{')
		if open < 0 || strings.TrimSpace(rest[:open]) != "" {
			errs = append(errs, fmt.Sprintf("%s: no body after parameter list", name))
			continue
		}
		depth, end := 0, -1
		for i := open; i < len(rest) && end < 0; i++ {
			switch rest[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			errs = append(errs, fmt.Sprintf("%s: body not closed", name))
			continue
		}
		for _, l := range strings.Split(rest[open+1:end], "\n") {
			if l = strings.TrimSpace(l); l != "" {
				e.body = append(e.body, l)
			}
		}
		ents = append(ents, e)
	}
	return ents, errs
}

// lint returns every structural problem found in the PTX module src.
func lint(src string) []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	s := stripComments(src)

	// Header: the first three directives, in order.
	var dirs []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			dirs = append(dirs, l)
		}
		if len(dirs) == 3 {
			break
		}
	}
	wantHead := []string{".version 7.0", ".target sm_70", ".address_size 64"}
	if len(dirs) != 3 || strings.Join(dirs, "|") != strings.Join(wantHead, "|") {
		bad("module header is %q, want %q", dirs, wantHead)
	}

	// Braces and parentheses balance over the whole module.
	for _, pair := range []string{"{}", "()", "[]"} {
		depth := 0
		for _, c := range s {
			switch c {
			case rune(pair[0]):
				depth++
			case rune(pair[1]):
				depth--
			}
			if depth < 0 {
				break
			}
		}
		if depth != 0 {
			bad("unbalanced %s (final depth %d)", pair, depth)
		}
	}

	ents, perrs := parseEntries(s)
	errs = append(errs, perrs...)

	// Each expected entry exactly once, visible, with the expected params;
	// no unexpected entries.
	seen := map[string]int{}
	for _, e := range ents {
		seen[e.name]++
	}
	for name := range wantParams {
		if n := len(regexp.MustCompile(`\.visible\s+\.entry\s+`+regexp.QuoteMeta(name)+`\s*\(`).FindAllString(s, -1)); n != 1 {
			bad("%s: %d .visible .entry declarations, want 1", name, n)
		}
		if seen[name] != 1 {
			bad("%s: parsed %d times, want 1", name, seen[name])
		}
	}
	for name := range seen {
		if _, ok := wantParams[name]; !ok {
			bad("unexpected entry %s", name)
		}
	}

	for _, e := range ents {
		lintEntry(e, bad)
	}
	return errs
}

func lintEntry(e entry, bad func(string, ...any)) {
	// Parameters.
	want := wantParams[e.name]
	var got []string
	ptypes := map[string]string{}
	for _, p := range e.params {
		got = append(got, p.typ)
		if _, dup := ptypes[p.name]; dup {
			bad("%s: parameter %s declared twice", e.name, p.name)
		}
		ptypes[p.name] = p.typ
	}
	if want != nil && strings.Join(got, ",") != strings.Join(want, ",") {
		bad("%s: parameter types %v, want %v", e.name, got, want)
	}

	// Register declarations.
	decl := map[string]int{}
	var code []string
	for _, l := range e.body {
		if !strings.HasPrefix(l, ".reg") {
			code = append(code, l)
			continue
		}
		m := reRegDecl.FindStringSubmatch(l)
		if m == nil {
			bad("%s: unparsed register declaration %q", e.name, l)
			continue
		}
		typ, prefix := m[1], m[2]
		n, _ := strconv.Atoi(m[3])
		if _, dup := decl[prefix]; dup {
			bad("%s: register prefix %%%s declared twice", e.name, prefix)
		}
		decl[prefix] = n
		if c, ok := regClass[prefix]; !ok || c != typ {
			bad("%s: %%%s declared .%s, want .%s", e.name, prefix, typ, c)
		}
	}

	// Instructions and labels.
	labels := map[string]bool{}
	for _, l := range code {
		if m := reLabelDef.FindStringSubmatch(l); m != nil {
			if labels[m[1]] {
				bad("%s: label %s defined twice", e.name, m[1])
			}
			labels[m[1]] = true
		}
	}
	for _, l := range code {
		if reLabelDef.MatchString(l) {
			continue
		}
		if !strings.HasSuffix(l, ";") {
			bad("%s: statement not ended by ';': %q", e.name, l)
		}
		if strings.HasPrefix(l, ".") {
			bad("%s: unexpected directive in body: %q", e.name, l)
		}
		for _, m := range reRegUse.FindAllStringSubmatch(l, -1) {
			prefix, num := m[1], m[2]
			if specialRegs[prefix] && num == "" {
				continue
			}
			n, ok := decl[prefix]
			if !ok {
				bad("%s: register %s not declared: %q", e.name, m[0], l)
				continue
			}
			k, err := strconv.Atoi(num)
			if err != nil || k >= n {
				bad("%s: register %s outside %%%s<%d>: %q", e.name, m[0], prefix, n, l)
			}
		}
		for _, m := range reBranch.FindAllStringSubmatch(l, -1) {
			if !labels[m[1]] {
				bad("%s: branch to undefined label %s", e.name, m[1])
			}
		}
		for _, m := range reLdParam.FindAllStringSubmatch(l, -1) {
			pt, ok := ptypes[m[2]]
			if !ok {
				bad("%s: ld.param of unknown parameter %s", e.name, m[2])
			} else if pt != m[1] {
				bad("%s: ld.param.%s of .%s parameter %s", e.name, m[1], pt, m[2])
			}
		}
	}
	if len(code) == 0 || code[len(code)-1] != "ret;" {
		bad("%s: body does not end with ret;", e.name)
	}
}

func TestPTXStructure(t *testing.T) {
	if len(ptx) == 0 {
		t.Fatal("embedded PTX is empty")
	}
	for _, e := range lint(string(ptx)) {
		t.Error(e)
	}
	ents, _ := parseEntries(stripComments(string(ptx)))
	if len(ents) != 3 {
		t.Fatalf("parsed %d entries, want 3", len(ents))
	}
}

// The spin kernel's stamps are taken by every block's thread 0 with
// atomics, in the form LLVM's NVPTX backend writes for sm_70 (llc-14:
// "atom.global.min.u64 %rd3, [%rd1], %rd2;"), not stored by block 0 alone:
// the stamps must span blocks that start apart.
func TestSpinStampsEveryBlock(t *testing.T) {
	ents, _ := parseEntries(stripComments(string(ptx)))
	var body []string
	for _, e := range ents {
		if e.name == Spin {
			body = e.body
		}
	}
	text := strings.Join(body, "\n")
	for _, re := range []string{
		`@!%p2 atom\.global\.min\.u64\s+%rd\d+, \[%rd6\], %rd2;`, // start[0] down to t0
		`@!%p2 atom\.global\.max\.u64\s+%rd\d+, \[%rd7\], %rd3;`, // start[1] up to the last reading
		`setp\.ne\.u32\s+%p3, %r1, 0;`,                           // p3: not thread 0 of its block
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("gpusim_spin has no %s:\n%s", re, text)
		}
	}
	if strings.Contains(text, "st.global") || strings.Contains(text, "%ctaid") {
		t.Errorf("gpusim_spin stores, or reads its block index: only block 0 would tell:\n%s", text)
	}
}

func TestPTXTerminated(t *testing.T) {
	a := PTX()
	if len(a) != len(ptx)+1 {
		t.Fatalf("len(PTX()) = %d, want %d", len(a), len(ptx)+1)
	}
	if a[len(a)-1] != 0 {
		t.Fatal("PTX() does not end with NUL")
	}
	if i := bytes.IndexByte(a, 0); i != len(a)-1 {
		t.Fatalf("PTX() has a NUL at %d, before its end (%d)", i, len(a)-1)
	}
	if !bytes.Equal(a[:len(a)-1], ptx) {
		t.Fatal("PTX() text differs from the embedded module")
	}
	a[0] = 'X'
	if b := PTX(); b[0] == 'X' || ptx[0] == 'X' {
		t.Fatal("PTX() shares memory with the embedded module")
	}
}

func TestReferenceCU(t *testing.T) {
	cu, err := os.ReadFile("kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	for name, ps := range wantParams {
		re := regexp.MustCompile(`extern "C" __global__ void ` + name + `\(([^)]*)\)`)
		m := re.FindAllSubmatch(cu, -1)
		if len(m) != 1 {
			t.Errorf("kernels.cu: %d definitions of %s, want 1", len(m), name)
			continue
		}
		if n := len(strings.Split(string(m[0][1]), ",")); n != len(ps) {
			t.Errorf("kernels.cu: %s has %d parameters, want %d", name, n, len(ps))
		}
	}
}

// TestLintCatches breaks the module in one way at a time and checks that
// lint reports it, so that a passing TestPTXStructure means something.
func TestLintCatches(t *testing.T) {
	src := string(ptx)
	cases := []struct {
		name, old, new, want string
	}{
		{"register out of range", ".reg .b64 \t%rd<25>;", ".reg .b64 \t%rd<24>;", "outside %rd<24>"},
		{"undeclared register", ".reg .f32 \t%f<19>;", "", "not declared"},
		{"wrong register class", ".reg .b32 \t%r<21>;", ".reg .b64 \t%r<21>;", "declared .b64"},
		{"undefined label", "bra.uni \t$L_copy_loop;", "bra.uni \t$L_copy_nope;", "undefined label $L_copy_nope"},
		{"duplicate label", "$L_fma_done:", "$L_fma_loop:", "defined twice"},
		{"param type", ".param .u32 gpusim_fma_iters", ".param .u64 gpusim_fma_iters", "parameter types"},
		{"param count", ".param .u64 gpusim_copy_n16", ".param .u64 gpusim_copy_n16,\n\t.param .u64 extra", "parameter types"},
		{"ld.param type", "ld.param.u32 \t%r1, [gpusim_fma_iters];", "ld.param.u64 \t%r1, [gpusim_fma_iters];", "ld.param.u64 of .u32"},
		{"missing entry", ".visible .entry gpusim_spin(", ".visible .entry gpusim_spun(", "gpusim_spin: 0"},
		{"duplicate entry", ".visible .entry gpusim_copy(", ".visible .entry gpusim_fma(", "gpusim_fma: 2"},
		{"unbalanced brace", "\tret;\n}\n", "\tret;\n", "unbalanced {}"},
		{"missing semicolon", "add.s64 \t%rd10, %rd10, %rd11;", "add.s64 \t%rd10, %rd10, %rd11", "not ended by ';'"},
		{"header", ".target sm_70", ".target sm_90", "module header"},
		{"no ret", "st.global.f32 \t[%rd7], %f18;\n\tret;", "st.global.f32 \t[%rd7], %f18;", "does not end with ret"},
	}
	for _, c := range cases {
		if !strings.Contains(src, c.old) {
			t.Errorf("%s: mutation target %q not in kernels.ptx", c.name, c.old)
			continue
		}
		bad := strings.Replace(src, c.old, c.new, 1)
		errs := lint(bad)
		found := false
		for _, e := range errs {
			if strings.Contains(e, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: lint did not report %q; got %q", c.name, c.want, errs)
		}
	}
}
