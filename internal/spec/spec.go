// Package spec reads topology and scenario YAML strictly and with positions:
// every value is read through a Node that knows its file, line, column and
// field path, unknown keys are errors that list the valid ones, and all
// problems of a file are collected and reported together, one line each, as
// "file:line:col: path: message".
package spec

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"gpusim/internal/units"
	"gpusim/sim"
)

// Error is one problem in an input file.
type Error struct {
	File      string
	Line, Col int
	Path      string // field path, "hosts[0].cores"; may be empty
	Msg       string
	node      *yaml.Node // where it was recorded, if at a node
}

func (e *Error) Error() string {
	pos := fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	if e.Path != "" {
		return pos + ": " + shortPath(e.Path) + ": " + shortMsg(e.Msg)
	}
	return pos + ": " + shortMsg(e.Msg)
}

// shortMsg elides the middle of a message that quotes a very long value
// (a 300,000-character name), keeping its start and what would be valid
// at its end.
func shortMsg(m string) string {
	const keep = 300
	if utf8.RuneCountInString(m) <= 2*keep+50 {
		return m
	}
	r := []rune(m)
	return fmt.Sprintf("%s ...(%d characters)... %s", string(r[:keep]), len(r)-2*keep, string(r[len(r)-keep:]))
}

// MaxProblems bounds the problems reported for one file; the rest are
// counted on one more line.
const MaxProblems = 50

// shortPath elides the middle of a very long field path (deeply nested
// repeats), keeping its start and end.
func shortPath(p string) string {
	const keep = 40
	if len(p) <= 2*keep+5 {
		return p
	}
	return p[:keep] + "..." + p[len(p)-keep:]
}

// List is every problem found in an input, sorted by position; its Error is
// one line per problem.
type List []*Error

func (l List) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// MaxNodes bounds the YAML nodes read from one file (alias bombs included).
const MaxNodes = 20_000_000

// Doc is one input file being read.
type Doc struct {
	File  string
	errs  List
	nodes int
	// meant holds, for each mapping with an unknown key, the keys its
	// unknown keys were likely meant to be ("did you mean"). What such a
	// mapping then lacks ("a kernel needs a duration" where "durration"
	// is given) is the misspelt key itself: Err drops the mapping's own
	// errors that name a meant key, and reports the unknown key alone.
	meant map[*yaml.Node][]string
	// from holds, for each scalar that took a var's value, where that
	// value was given ("${kernel} from sweep: at 12:21"), for its errors.
	from map[*yaml.Node]string
	// keyRef holds the keys that refer to a var, reported as such by
	// Substitute (vars are not replaced in keys), with the key the vars'
	// values make ("" if a var is not defined): not reported also as
	// unknown, and, where that key is valid, it is meant.
	keyRef map[*yaml.Node]string
}

// Node is a YAML value with its place in the file.
type Node struct {
	d    *Doc
	n    *yaml.Node
	Path string
}

var yamlLineRe = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// oddIndent finds whether line at (from 1) or the one before it, where a
// syntax error was found, is indented with a space other than ' ' and '\t'
// (a no-break space pasted from a web page): that line, the column and the
// space. Lines further up are not looked at: one inside a block or quoted
// scalar may hold such a space as text.
func oddIndent(data []byte, at int) (line, col int, r rune, ok bool) {
	lines := strings.SplitN(string(data), "\n", at+1)
	for _, i := range []int{at - 1, at - 2} {
		if i < 0 || i >= len(lines) {
			continue
		}
		text := lines[i]
		for c, x := range []rune(text) {
			if x == ' ' || x == '\t' {
				continue
			}
			if oddSpace(x) || x == '\ufeff' && i > 0 {
				return i + 1, c + 1, x, true
			}
			break
		}
	}
	return 0, 0, 0, false
}

// oddSpace reports whether r is a space YAML does not take for one: not
// ' ', '\t' or a line end.
func oddSpace(r rune) bool {
	return r != ' ' && r != '\t' && r != '\r' && r != '\n' && (unicode.IsSpace(r) || r == '\u200b')
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// spaceName names a space character for messages.
func spaceName(r rune) string {
	switch r {
	case '\u00a0':
		return "no-break space (U+00A0)"
	case '\u3000':
		return "ideographic space (U+3000)"
	}
	return fmt.Sprintf("space character U+%04X", r)
}

// mappingValuesHint is syntaxHint's guess for "mapping values are not
// allowed in this context".
const mappingValuesHint = " (a line indented deeper than the key before it, or a value holding \": \" that wants quotes)"

// syntaxHint says what most often causes the parser's message msg about
// line (1-based) of data, where it can tell: a tab in the indentation, a
// line indented deeper than the key before it.
func syntaxHint(data []byte, line int, msg string) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	text := lines[line-1]
	indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
	switch {
	case strings.Contains(indent, "\t"):
		return " (a tab indents this line: YAML indents with spaces)"
	case strings.Contains(msg, "mapping values are not allowed"):
		return mappingValuesHint
	}
	return ""
}

// unquotedVarInFlow returns the column (from 1, in characters) of the
// first ${ on the line that is inside a flow mapping or list ({ } or [ ])
// opened on it and outside quotes, or 0: YAML cannot read it as a plain
// value there.
func unquotedVarInFlow(text string) int {
	depth, col := 0, 0
	var quote byte
	prev := byte(' ') // the last character not a space or tab
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c&0xC0 != 0x80 {
			col++ // a character's first byte
		}
		switch {
		case quote == '\'' && c == '\'' && i+1 < len(text) && text[i+1] == '\'':
			i++ // '' is a quote inside single quotes
			col++
			continue
		case quote == '"' && c == '\\':
			i++ // an escape: the next character is not the closing quote
			col++
			continue
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t'):
			return 0
		case (c == '"' || c == '\'') && strings.IndexByte(" :-[{,", prev) >= 0:
			quote = c
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == '$' && depth > 0 && i+1 < len(text) && text[i+1] == '{':
			return col
		}
		if c != ' ' && c != '\t' {
			prev = c
		}
	}
	return 0
}

// locateSyntaxError finds where a YAML syntax error is. The parser's
// message names the line where the construct it was parsing began,
// counted from 0 for parser errors ("did not find expected ',' or '}'"
// on a flow mapping opened on line 7 says line 6) and from 1 for the
// scanner's, and no column. The error is instead on the line after a
// prefix of whole lines that parses where one more line does not:
// everything before it is valid YAML, and it is not. The last 64 lines
// are tried from the end (a bracket or quote that spans lines before the
// error leaves prefixes ending inside it that do not parse), then the
// rest by bisection, so that a large file costs a few parses. The column
// is that of the bracket or quote left open where the message expects
// one to be closed, else the line's first character. yamlLine is the
// fallback when the search would parse too much (32 MB of prefixes).
// An error inside a bracket or quote that spans lines is reported where
// it began.
func locateSyntaxError(data []byte, yamlLine int, msg string) (line, col int, hint string) {
	lines := strings.SplitAfter(string(data), "\n")
	ends := make([]int, len(lines)+1) // ends[k]: the size of the first k lines
	for k, l := range lines {
		ends[k+1] = ends[k] + len(l)
	}
	// Each search parses at most 32 MB of prefixes (seconds, for the
	// largest files).
	budget := 32 << 20
	parsesWithin := func(budget *int) func(b []byte) bool {
		return func(b []byte) bool {
			*budget -= len(b)
			var n yaml.Node
			return *budget >= 0 && yaml.Unmarshal(b, &n) == nil
		}
	}
	parsesText := parsesWithin(&budget)
	parses := func(k int) bool { return parsesText(data[:ends[k]]) }
	n := len(lines)
	// The last lines first, as many as half the budget allows (each try
	// parses about the whole file), the rest for the bisection: a 1 MB
	// file spent the whole budget on the last 32 lines.
	back := min(64, budget/2/max(len(data), 1))
	if k, found := lastPrefix(0, n-1, back, parses, func() bool { return budget <= 0 }); found {
		line = k + 1
	}
	// A bracket opened on an earlier line and never closed: the prefixes
	// that end inside it do not parse, so the search above stops where it
	// opened, whatever line the error is on. Those prefixes with what is
	// open closed after them do parse, up to the error: the innermost
	// bracket of the kind the parser wanted closed, open where the longest
	// such prefix ends, is the one left open.
	budget2 := 32 << 20
	if ln, c, h, ok := unclosedBracket(data, lines, ends, line, msg, parsesWithin(&budget2), func() bool { return budget2 <= 0 }); ok {
		return ln, c, h
	}
	if line == 0 || line > len(lines) {
		return max(yamlLine, 1), 1, ""
	}
	text := strings.TrimRight(lines[line-1], "\r\n")
	at := func(i int) int { return utf8.RuneCountInString(text[:i]) + 1 } // columns count characters, as the parser's do
	col = at(len(text) - len(strings.TrimLeft(text, " ")))
	sc := scanLine(text)
	closes := strings.Contains(msg, "'}'") || strings.Contains(msg, "']'")
	if sc.mismatch >= 0 && closes {
		return line, at(sc.mismatch), fmt.Sprintf(" (this %c closes a %c)", text[sc.mismatch], text[sc.open[len(sc.open)-1]])
	}
	for _, b := range []struct {
		open byte
		want string
	}{{'{', "'}'"}, {'[', "']'"}} {
		if !strings.Contains(msg, b.want) {
			continue
		}
		for i := len(sc.open) - 1; i >= 0; i-- {
			if text[sc.open[i]] == b.open {
				return line, at(sc.open[i]), fmt.Sprintf(" (the %c here is not closed)", b.open)
			}
		}
	}
	if sc.quote >= 0 && (strings.Contains(msg, "end of stream") || strings.Contains(msg, "quoted scalar")) {
		return line, at(sc.quote), fmt.Sprintf(" (the %c here is not closed)", text[sc.quote])
	}
	// A closing bracket where none is open (the brackets of the lines
	// before followed, so that one closing a list opened above is not
	// taken for it).
	if strings.Contains(msg, "did not find expected") {
		var f flowScan
		for k := 0; k < line-1; k++ {
			f.feed(strings.TrimRight(lines[k], "\r\n"), k)
		}
		if f.top == nil && f.quote == nil && !f.broken {
			if f.feed(text, line-1); f.stray >= 0 {
				return line, at(f.stray), fmt.Sprintf(" (this %c closes nothing: one too many, or its opening %c is missing)", text[f.stray], map[byte]byte{'}': '{', ']': '['}[text[f.stray]])
			}
		}
	}
	// "key: a: b": a plain value holding ": ", on a line not indented
	// deeper than the one before (then the indentation is as likely).
	if strings.Contains(msg, "mapping values are not allowed") && !deeperThanBefore(lines, line) {
		if v, end := colonInValue(text); v >= 0 {
			val := strings.TrimSpace(text[v:end])
			if utf8.RuneCountInString(val) > 60 {
				val = string([]rune(val)[:57]) + "..."
			}
			return line, at(v), fmt.Sprintf(" (a value holding \": \" wants quotes: %q)", val)
		}
	}
	// The reader takes %YAML 1.1 alone; no file needs the directive.
	if strings.Contains(msg, "incompatible YAML document") && strings.HasPrefix(strings.TrimSpace(text), "%YAML") {
		return line, col, fmt.Sprintf(" (%s: gpusim reads YAML without a version directive: remove this line)", strings.TrimSpace(text))
	}
	return line, col, ""
}

// deeperThanBefore says whether line (from 1) is indented deeper than the
// last line before it that holds more than a comment, and that line opens
// no block (it does not end in ':').
func deeperThanBefore(lines []string, line int) bool {
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	cur := strings.TrimRight(lines[line-1], "\r\n")
	for k := line - 2; k >= 0; k-- {
		prev := strings.TrimRight(lines[k], "\r\n")
		body := strings.TrimSpace(prev)
		if body == "" || strings.HasPrefix(body, "#") {
			continue
		}
		if c := strings.Index(body, " #"); c >= 0 {
			body = strings.TrimSpace(body[:c])
		}
		return indent(cur) > indent(prev) && !strings.HasSuffix(body, ":") && !strings.HasPrefix(body, "- ")
	}
	return false
}

// colonInValue is where the value of a block mapping's key begins on line
// text ("key: a: b", "- key: a: b"), and where it ends (before a comment),
// when that value is plain (not quoted, not a flow) and itself holds ": ";
// -1 otherwise.
func colonInValue(text string) (at, end int) {
	body := strings.TrimLeft(text, " ")
	start := len(text) - len(body)
	for strings.HasPrefix(body, "- ") {
		body = strings.TrimLeft(body[2:], " ")
		start = len(text) - len(body)
	}
	k := strings.Index(body, ": ")
	if k <= 0 || strings.ContainsAny(body[:1], "\"'{[#") {
		return -1, -1
	}
	v := k + 2
	for v < len(body) && body[v] == ' ' {
		v++
	}
	if v >= len(body) || strings.ContainsAny(body[v:v+1], "\"'{[|>&*!#") {
		return -1, -1
	}
	rest := body[v:]
	if c := strings.Index(rest, " #"); c >= 0 {
		rest = rest[:c]
	}
	if !strings.Contains(rest, ": ") && !strings.HasSuffix(strings.TrimRight(rest, " "), ":") {
		return -1, -1
	}
	return start + v, start + v + len(rest)
}

// lastPrefix finds the largest k from lo to hi for which ok(k) holds (a
// prefix of k lines that parses): it tries the last back values one by one
// (an error is most often near a file's end), then bisects below them,
// taking ok to hold up to the answer and not after it, and ok(lo-1) to
// hold. It returns lo-1 where none does. found is false where spent
// stopped it before it knew; k is then the largest it saw hold, or lo-1.
func lastPrefix(lo, hi, back int, ok func(int) bool, spent func() bool) (k int, found bool) {
	below := max(lo, hi-back+1)
	for k := hi; k >= below; k-- {
		if spent() {
			return lo - 1, false
		}
		if ok(k) {
			return k, true
		}
	}
	a, b := lo-1, below // ok(a) is taken to hold; ok(b) does not, or b is past hi
	for b-a > 1 {
		if spent() {
			return a, false
		}
		mid := (a + b) / 2
		if ok(mid) {
			a = mid
		} else {
			b = mid
		}
	}
	return a, true
}

// unclosedBracket finds the bracket a parser error that wants one closed
// (msg names '}' or ']') is about, where it opened on an earlier line than
// the error: data's first k lines, with what is open after them closed,
// parse for every k up to the line of the error. The longest such prefix
// that includes line from (the first line whose prefix does not parse as
// it is; 0: none) is searched for as locateSyntaxError searches, and the
// innermost bracket of the kind wanted open after it is the answer (line
// and column from 1).
func unclosedBracket(data []byte, lines []string, ends []int, from int, msg string, parses func([]byte) bool, spent func() bool) (line, col int, hint string, ok bool) {
	var open byte
	switch {
	case strings.Contains(msg, "'}'"):
		open = '{'
	case strings.Contains(msg, "']'"):
		open = '['
	default:
		return 0, 0, "", false
	}
	n := len(lines)
	// The scan's state after every 1024th line; others are scanned from there.
	const every = 1024
	marks := make([]flowScan, 0, n/every+1)
	var f flowScan
	for k := 0; k <= n; k++ {
		if k%every == 0 {
			marks = append(marks, f)
		}
		if k < n {
			f.feed(strings.TrimRight(lines[k], "\r\n"), k)
		}
	}
	stateAt := func(k int) flowScan {
		f := marks[k/every]
		for j := k / every * every; j < k; j++ {
			f.feed(strings.TrimRight(lines[j], "\r\n"), j)
		}
		return f
	}
	closes := func(k int) bool {
		f := stateAt(k)
		if f.broken || f.top == nil && f.quote == nil {
			return false
		}
		text := strings.TrimRight(string(data[:ends[k]]), "\r\n")
		if f.comment {
			// After a comment, on a line of its own, indented as the last.
			last := strings.TrimRight(lines[k-1], "\r\n")
			text += "\n" + last[:len(last)-len(strings.TrimLeft(last, " "))]
		}
		return parses([]byte(text + f.closers() + "\n"))
	}
	lo := max(from, 1)
	best, _ := lastPrefix(lo, n, 64, closes, spent)
	if best < lo {
		return 0, 0, "", false
	}
	colOf := func(line, idx int) int {
		return utf8.RuneCountInString(strings.TrimRight(lines[line], "\r\n")[:idx]) + 1
	}
	// The next line closes a bracket with one of the other kind: that is
	// the error, not the bracket it closes, which is left open.
	if best < n {
		if next := stateAt(best + 1); next.mismatch >= 0 && next.top != nil {
			text := strings.TrimRight(lines[best], "\r\n")
			o := next.top
			if o.line == best {
				return best + 1, colOf(best, next.mismatch), fmt.Sprintf(" (this %c closes a %c)", text[next.mismatch], o.c), true
			}
			return best + 1, colOf(best, next.mismatch), fmt.Sprintf(" (this %c closes the %c at %d:%d)", text[next.mismatch], o.c, o.line+1, colOf(o.line, o.idx)), true
		}
	}
	st := stateAt(best)
	for o := st.top; o != nil; o = o.up {
		if o.c == open {
			return o.line + 1, colOf(o.line, o.idx), fmt.Sprintf(" (the %c here is not closed)", open), true
		}
	}
	return 0, 0, "", false
}

// lineScan is what scanLine finds on a line of YAML: the positions of the
// brackets ({ and [) it opens and does not close, of the first closing
// bracket that does not match the one open (-1 if none), and of a quote
// that opens a quoted value and is not closed (-1 if none); what is
// quoted and comments aside.
type lineScan struct {
	open            []int
	mismatch, quote int
}

func scanLine(text string) lineScan {
	var f flowScan
	f.feed(text, 0)
	sc := lineScan{mismatch: f.mismatch, quote: -1}
	for o := f.top; o != nil; o = o.up {
		sc.open = append([]int{o.idx}, sc.open...)
	}
	if f.quote != nil {
		sc.quote = f.quote.idx
	}
	return sc
}

// bracket is an open bracket or quote: its line (from 0), byte offset in
// the line and character; up is the bracket it is inside.
type bracket struct {
	line, idx int
	c         byte
	up        *bracket
}

// flowScan follows the brackets and quotes of YAML text line by line, what
// is quoted and comments aside: the state after each line is a few
// pointers (the open brackets are a linked stack that lines share).
type flowScan struct {
	top      *bracket // the innermost open bracket
	quote    *bracket // an open quote
	mismatch int      // where a closing bracket did not match, on the last line fed; -1 if none
	stray    int      // where a closing bracket closed nothing after a flow opened on the last line fed; -1 if none
	opened   bool     // a bracket was opened on the last line fed
	broken   bool     // a bracket did not match: what follows is not followed
	comment  bool     // the last line fed ends in a comment
	prev     byte     // the last character outside quotes that is not a space
}

// feed reads one line (without its line break).
func (f *flowScan) feed(text string, line int) {
	f.mismatch, f.stray, f.comment, f.opened = -1, -1, false, false
	if f.broken {
		return
	}
	f.prev = ' ' // a line break separates like a space
	for i := 0; i < len(text); i++ {
		c := text[i]
		if f.quote != nil {
			q := f.quote.c
			switch {
			case q == '"' && c == '\\':
				i++ // an escape: the next character is not the end
			case q == '\'' && c == '\'' && i+1 < len(text) && text[i+1] == '\'':
				i++ // '' is a quote inside single quotes
			case c == q:
				f.quote = nil
				f.prev = c
			}
			continue
		}
		switch {
		case (c == '"' || c == '\'') && strings.IndexByte(" :-[{,", f.prev) >= 0:
			// A quote opens a quoted value only where a value begins;
			// elsewhere (Rank 0's copy) it is a character of a plain one.
			f.quote = &bracket{line: line, idx: i, c: c}
		case c == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t'):
			f.comment = true
			return
		case c == '{' || c == '[':
			f.top = &bracket{line: line, idx: i, c: c, up: f.top}
			f.opened = true
		case (c == '}' || c == ']') && f.top == nil:
			// After a flow opened on this line ("{a: 1}}"); in a plain
			// value ("c: x}") a bracket is a character like any other.
			if f.stray < 0 && f.opened {
				f.stray = i
			}
		case (c == '}' || c == ']') && f.top != nil:
			if f.top.c == '{' && c == ']' || f.top.c == '[' && c == '}' {
				f.mismatch, f.broken = i, true
				return
			}
			f.top = f.top.up
		}
		if c != ' ' && c != '\t' {
			f.prev = c
		}
	}
}

// closers is the text that closes what is open, quote first.
func (f *flowScan) closers() string {
	var b []byte
	if f.quote != nil {
		b = append(b, f.quote.c)
	}
	for o := f.top; o != nil; o = o.up {
		if o.c == '{' {
			b = append(b, '}')
		} else {
			b = append(b, ']')
		}
	}
	return string(b)
}

// Parse parses data as one YAML document whose top level must be a mapping.
func Parse(file string, data []byte) (*Doc, Node, error) {
	d := &Doc{File: file}
	if len(strings.TrimSpace(string(data))) == 0 {
		return d, Node{}, List{{File: file, Line: 1, Col: 1, Msg: "the file is empty: expected a YAML mapping"}}
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		line, msg := 1, err.Error()
		if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
			if m[1] != "" {
				line, _ = strconv.Atoi(m[1])
			}
			msg = m[2]
		}
		msg = strings.ReplaceAll(msg, "\n", " ")
		line, col, hint := locateSyntaxError(data, line, msg)
		if hint == "" {
			hint = syntaxHint(data, line, msg)
		}
		if l, c, r, ok := oddIndent(data, line); ok && (hint == "" || hint == mappingValuesHint) {
			// A space YAML does not take for one, on this line or the one
			// before, where nothing surer was found: the likelier cause,
			// and where it is.
			line, col, hint = l, c, fmt.Sprintf(" (a %s indents this line: YAML indents with spaces)", spaceName(r))
		}
		if lines := strings.Split(string(data), "\n"); line >= 1 && line <= len(lines) {
			if c := unquotedVarInFlow(lines[line-1]); c > 0 {
				col, hint = c, " (a ${var} inside { } or [ ] needs quotes, \"${...}\": there YAML reads its { as a mapping's)"
			}
		}
		return d, Node{}, List{{File: file, Line: line, Col: col, Msg: "not valid YAML: " + msg + hint}}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return d, Node{}, List{{File: file, Line: 1, Col: 1, Msg: "the file holds no YAML document: expected a mapping"}}
	}
	// A second document would be ignored, whatever it says; an empty one
	// (a --- at the end) says nothing.
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if err == io.EOF {
			break
		}
		if err == nil && (len(next.Content) == 0 || next.Content[0].Kind == yaml.ScalarNode && next.Content[0].Tag == "!!null") {
			continue
		}
		return d, Node{}, List{{File: file, Line: secondDocument(data), Col: 1, Msg: "a second YAML document starts here: a topology or scenario file holds one (remove it and what follows, or make the two one document)"}}
	}
	n := Node{d: d, n: root.Content[0]}
	if n.n.Kind != yaml.MappingNode {
		return d, Node{}, List{{File: file, Line: n.n.Line, Col: n.n.Column, Msg: "the top level must be a mapping of keys to values"}}
	}
	return d, n, nil
}

// secondDocument returns the line (from 1) where data's second YAML
// document starts: a --- after the first document began (a --- before any
// content starts the first), or content after a ... that ended it.
// Directives (%YAML) and comments are not content.
func secondDocument(data []byte) int {
	marker := func(l, m string) bool {
		return l == m || strings.HasPrefix(l, m+" ") || strings.HasPrefix(l, m+"\t")
	}
	started, ended := false, false
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		t := strings.TrimSpace(l)
		switch {
		case marker(l, "---"):
			if started {
				return i + 1
			}
			started = true
		case marker(l, "..."):
			ended = started
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(l, "%"):
		default:
			if ended {
				return i + 1
			}
			started = true
		}
	}
	return 1
}

// The top-level keys that only a scenario has, and only a topology: what
// tells the two kinds of file apart.
var (
	ScenarioKeys = []string{"threads", "training", "pipeline", "topology", "sweep"}
	TopologyKeys = []string{"hosts", "gpus", "switches", "links"}
)

// KindOf reads data's top-level keys: "scenario" where one is a scenario's,
// else "topology" where one is a topology's, else "".
func KindOf(data []byte) string {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return ""
	}
	kind := ""
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch k := top.Content[i].Value; {
		case contains(ScenarioKeys, k):
			return "scenario"
		case contains(TopologyKeys, k):
			kind = "topology"
		}
	}
	return kind
}

// WrongKind returns the error of a file that holds the other kind of input,
// or nil: where n, the top level, has none of mine's keys (the keys only
// this kind has) and some of other's, it reads as an other, not a what.
// Every one of its keys would be unknown; one line says why.
func (n Node) WrongKind(what, other, hint string, mine, others []string) error {
	y := n.resolve()
	if y == nil || y.Kind != yaml.MappingNode {
		return nil
	}
	var found []string
	for i := 0; i+1 < len(y.Content); i += 2 {
		k := y.Content[i].Value
		if contains(mine, k) {
			return nil
		}
		if contains(others, k) {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		return nil
	}
	return List{{File: n.d.File, Line: y.Line, Col: y.Column,
		Msg: fmt.Sprintf("this is %s, not %s (its keys include %s); %s", other, what, strings.Join(found, ", "), hint)}}
}

// Err returns the problems found so far, or nil.
func (d *Doc) Err() error {
	if len(d.errs) == 0 {
		return nil
	}
	if len(d.meant) > 0 {
		kept := d.errs[:0]
		for _, e := range d.errs {
			if !namesAny(e.Msg, d.meant[e.node]) {
				kept = append(kept, e)
			}
		}
		d.errs = kept
	}
	sort.SliceStable(d.errs, func(i, j int) bool {
		a, b := d.errs[i], d.errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	d.errs = collapse(d.errs)
	if len(d.errs) > MaxProblems {
		rest := d.errs[MaxProblems]
		return append(d.errs[:MaxProblems:MaxProblems], &Error{File: rest.File, Line: rest.Line, Col: rest.Col,
			Msg: fmt.Sprintf("and %d more problems from here on; fix those above first", len(d.errs)-MaxProblems)})
	}
	return d.errs
}

// collapse reports a problem repeated at several places of the same
// kind (the same unknown GPU model on every GPU of a machine: the same
// message on fields whose paths differ only in list indices) once, at its
// first place, with the others': their lines, or their line:col where two
// share a line, or their paths where two share a place (an alias).
func collapse(errs List) List {
	key := func(e *Error) string { return e.Msg + "\x00" + indexRe.ReplaceAllString(e.Path, "[]") }
	first := map[string]int{}
	more := map[string][]*Error{}
	out := errs[:0:0]
	for _, e := range errs {
		k := key(e)
		if _, seen := first[k]; seen {
			more[k] = append(more[k], e)
			continue
		}
		first[k] = len(out)
		out = append(out, e)
	}
	for k, others := range more {
		e := *out[first[k]]
		lines := map[int]bool{e.Line: true}
		places := map[[2]int]bool{{e.Line, e.Col}: true}
		byLine, byPlace := true, true
		for _, o := range others {
			if lines[o.Line] {
				byLine = false
			}
			if places[[2]int{o.Line, o.Col}] {
				byPlace = false
			}
			lines[o.Line] = true
			places[[2]int{o.Line, o.Col}] = true
		}
		var ps []string
		for _, o := range others {
			if len(ps) == 8 {
				ps = append(ps, "...")
				break
			}
			switch {
			case byLine:
				ps = append(ps, strconv.Itoa(o.Line))
			case byPlace:
				ps = append(ps, fmt.Sprintf("%d:%d", o.Line, o.Col))
			default:
				ps = append(ps, shortPath(o.Path))
			}
		}
		word, where := "place", ""
		if len(others) > 1 {
			word = "places"
		}
		if byLine {
			where = "line "
			if len(others) > 1 {
				where = "lines "
			}
		}
		e.Msg += fmt.Sprintf(" (and at %d more %s: %s%s)", len(others), word, where, strings.Join(ps, ", "))
		out[first[k]] = &e
	}
	return out
}

var indexRe = regexp.MustCompile(`\[\d+\]`)

// namesAny reports whether msg names one of keys as a word.
func namesAny(msg string, keys []string) bool {
	for _, k := range keys {
		for i := 0; ; {
			j := strings.Index(msg[i:], k)
			if j < 0 {
				break
			}
			j += i
			before := j == 0 || !isWordByte(msg[j-1])
			after := j+len(k) == len(msg) || !isWordByte(msg[j+len(k)])
			if before && after {
				return true
			}
			i = j + 1
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Errorf records a problem at n.
func (n Node) Errorf(format string, a ...any) {
	line, col := 1, 1
	if n.n != nil {
		line, col = n.n.Line, n.n.Column
	}
	msg, y := fmt.Sprintf(format, a...), n.resolveQuiet()
	if f := n.d.from[y]; f != "" {
		msg += " (" + f + ")"
	}
	n.d.errs = append(n.d.errs, &Error{File: n.d.File, Line: line, Col: col, Path: n.Path, Msg: msg, node: y})
}

// Pos returns "file:line:col" of n.
func (n Node) Pos() string {
	if n.n == nil {
		return n.d.File
	}
	return fmt.Sprintf("%s:%d:%d", n.d.File, n.n.Line, n.n.Column)
}

// Valid reports whether n holds a value (it was present in the file).
func (n Node) Valid() bool { return n.n != nil }

// Target returns the YAML node n stands for: an alias's anchored node, or
// n's own.
func (n Node) Target() *yaml.Node { return n.resolveQuiet() }

// Raw returns the underlying YAML node.
func (n Node) Raw() *yaml.Node { return n.n }

// Cloner returns a function that copies the tree below n, each call into
// a Doc of its own with no problems recorded: Substitute may then change
// the copy's scalars while n stays as it was, so that a file parsed once
// loads many times (a sweep's points), at once if need be. Only what
// Substitute can change is copied: the scalars that refer to a var, and
// the mappings, lists and aliases above them; the rest is shared, read
// only. Aliases in a copy point into the copy. n must not change after.
func (n Node) Cloner() func() (*Doc, Node) {
	// vars holds the nodes below which a var is referred to. Only an
	// anchored node can be met twice (in its place, and from each alias
	// to it), so its answer is kept; one met again while it is being
	// looked at (from an alias inside it) counts as referring, which
	// copies a little more than needed and nothing less.
	vars, anchored, busy := map[*yaml.Node]bool{}, map[*yaml.Node]bool{}, map[*yaml.Node]bool{}
	var refers func(y *yaml.Node) bool
	refers = func(y *yaml.Node) bool {
		if y == nil {
			return false
		}
		if y.Anchor != "" {
			if r, ok := anchored[y]; ok {
				return r
			}
			if busy[y] {
				return true
			}
			busy[y] = true
		}
		r := y.Kind == yaml.ScalarNode && strings.Contains(y.Value, "${")
		r = refers(y.Alias) || r
		for _, x := range y.Content {
			r = refers(x) || r
		}
		if r {
			vars[y] = true
		}
		if y.Anchor != "" {
			anchored[y] = r
			delete(busy, y)
		}
		return r
	}
	refers(n.n)
	return func() (*Doc, Node) {
		d := &Doc{File: n.d.File}
		done := map[*yaml.Node]*yaml.Node{}
		var clone func(y *yaml.Node) *yaml.Node
		clone = func(y *yaml.Node) *yaml.Node {
			if !vars[y] {
				return y
			}
			if c, ok := done[y]; ok {
				return c
			}
			c := new(yaml.Node)
			*c = *y
			done[y] = c
			c.Content = make([]*yaml.Node, len(y.Content))
			for i, x := range y.Content {
				c.Content[i] = clone(x)
			}
			c.Alias = clone(y.Alias)
			return c
		}
		return d, Node{d: d, n: clone(n.n), Path: n.Path}
	}
}

// Child returns a Node for a YAML node below n.
func (n Node) Child(y *yaml.Node, path string) Node {
	return Node{d: n.d, n: y, Path: path}
}

// resolveQuiet is resolve without counting a node read.
func (n Node) resolveQuiet() *yaml.Node {
	y := n.n
	for i := 0; y != nil && y.Kind == yaml.AliasNode && i < 100; i++ {
		y = y.Alias
	}
	return y
}

func (n Node) resolve() *yaml.Node {
	y := n.n
	for i := 0; y != nil && y.Kind == yaml.AliasNode && i < 100; i++ {
		y = y.Alias
	}
	n.d.nodes++
	return y
}

func kindName(y *yaml.Node) string {
	switch y.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if y.Tag == "!!null" {
			return "empty"
		}
		return fmt.Sprintf("%q", y.Value)
	}
	return "an alias"
}

// Map is a mapping being read; Check reports the keys nobody asked for.
type Map struct {
	n     Node
	keys  []string
	vals  map[string]*yaml.Node
	knode map[string]*yaml.Node
	valid []string
}

// MapAny reads n as a mapping of names the caller defines (vars,
// semaphores): any key is valid. Merge keys merge as in Map.
func (n Node) MapAny() (*Map, bool) { return n.mapOf(nil, true) }

// Map reads n as a mapping whose only keys are valid. It reports duplicate
// keys. ok is false (and the problem recorded) when n is not a mapping.
func (n Node) Map(valid ...string) (*Map, bool) { return n.mapOf(valid, false) }

func (n Node) mapOf(valid []string, anyKey bool) (*Map, bool) {
	y := n.resolve()
	if y == nil || y.Kind != yaml.MappingNode {
		if y != nil && (anyKey || len(valid) == 0) {
			n.Errorf("expected a mapping of names to values (name: value), got %s", kindName(y))
		} else if y != nil {
			n.Errorf("expected a mapping with keys %s, got %s", strings.Join(valid, ", "), kindName(y))
		}
		return &Map{n: n, vals: map[string]*yaml.Node{}, knode: map[string]*yaml.Node{}, valid: valid}, false
	}
	m := &Map{n: n, vals: map[string]*yaml.Node{}, knode: map[string]*yaml.Node{}, valid: valid}
	var merges []*yaml.Node
	for i := 0; i+1 < len(y.Content); i += 2 {
		k, v := y.Content[i], y.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			n.Child(k, n.Path).Errorf("keys must be plain names")
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, k, v)
			continue
		}
		if prev, dup := m.knode[k.Value]; dup {
			n.Child(k, n.join(k.Value)).Errorf("duplicate key %q (first at %d:%d): give each key once", k.Value, prev.Line, prev.Column)
			continue
		}
		m.add(k, v)
	}
	// Merge keys (<<: *anchor, or a list of them), as YAML 1.1 has them:
	// the merged mappings' keys that the mapping does not set itself,
	// the first mapping merged winning.
	seen := map[*yaml.Node]bool{y: true}
	for i := 0; i < len(merges); i += 2 {
		m.merge(n, merges[i], merges[i+1], seen)
	}
	for _, k := range m.keys {
		if meant, ok := n.d.keyRef[m.knode[k]]; ok {
			// Reported by Substitute; the key the var makes, where valid,
			// is meant: the mapping's lack of it is not reported besides.
			if contains(valid, meant) {
				if n.d.meant == nil {
					n.d.meant = map[*yaml.Node][]string{}
				}
				n.d.meant[y] = append(n.d.meant[y], meant)
			}
			continue
		}
		if !anyKey && !contains(valid, k) && len(KeyVarRefs(k)) > 0 {
			// Not met by Substitute (a key at the top of a file): said
			// here, as Substitute says it.
			n.Child(m.knode[k], n.join(k)).Errorf("%s; write the key itself (valid keys here: %s)", keyRefMessage(KeyVarRefs(k)), strings.Join(valid, ", "))
			continue
		}
		if !anyKey && !contains(valid, k) {
			msg := fmt.Sprintf("unknown key %q", k)
			s := Suggest(k, valid)
			before, after, colon := strings.Cut(k, ":")
			switch {
			case colon && contains(valid, strings.TrimSpace(before)):
				// "stream:gpu0/s": YAML reads one key without the space.
				s = ""
				msg += fmt.Sprintf(" (a space after the ':' makes %q the key and %q its value)", strings.TrimSpace(before), strings.TrimSpace(after))
				if n.d.meant == nil {
					n.d.meant = map[*yaml.Node][]string{}
				}
				n.d.meant[y] = append(n.d.meant[y], strings.TrimSpace(before))
			case oddSpace(firstRune(k)):
				// "\u00a0 - kernel": YAML took the indentation for the key.
				s = ""
				msg += fmt.Sprintf(" (a %s indents this line: YAML indents with spaces)", spaceName(firstRune(k)))
			case strings.HasPrefix(k, "-") && contains(valid, strings.TrimSpace(k[1:])):
				s = ""
				msg += fmt.Sprintf(" (a space after the '-' makes %q a list item's key)", strings.TrimSpace(k[1:]))
			}
			if s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
				if n.d.meant == nil {
					n.d.meant = map[*yaml.Node][]string{}
				}
				n.d.meant[y] = append(n.d.meant[y], s)
			}
			n.Child(m.knode[k], n.join(k)).Errorf("%s; valid keys here: %s", msg, strings.Join(valid, ", "))
		}
	}
	return m, true
}

// add records key k with value v.
func (m *Map) add(k, v *yaml.Node) {
	m.keys = append(m.keys, k.Value)
	m.vals[k.Value] = v
	m.knode[k.Value] = k
}

// merge adds to m the keys of the mapping v (the value of merge key k), or
// of each mapping v lists, that m does not have yet. A mapping already
// merged (seen) adds nothing new, so each is read once: a mapping that
// merges itself twice over (<<: [*h, *h] inside &h) took forever.
func (m *Map) merge(n Node, k, v *yaml.Node, seen map[*yaml.Node]bool) {
	for i := 0; v != nil && v.Kind == yaml.AliasNode && i < 100; i++ {
		v = v.Alias
	}
	if v == nil || seen[v] {
		return
	}
	seen[v] = true
	n.d.nodes++
	switch {
	case n.d.nodes > MaxNodes:
		n.Child(k, n.Path).Errorf("more than %d YAML nodes (alias expansion?)", MaxNodes)
	case v.Kind == yaml.SequenceNode:
		for _, x := range v.Content {
			m.merge(n, k, x, seen)
		}
	case v.Kind == yaml.MappingNode:
		var inner []*yaml.Node
		for i := 0; i+1 < len(v.Content); i += 2 {
			mk, mv := v.Content[i], v.Content[i+1]
			if mk.Kind != yaml.ScalarNode {
				continue
			}
			if mk.Tag == "!!merge" {
				inner = append(inner, mk, mv)
				continue
			}
			if _, have := m.knode[mk.Value]; !have {
				m.add(mk, mv)
			}
		}
		for i := 0; i < len(inner); i += 2 {
			m.merge(n, inner[i], inner[i+1], seen)
		}
	default:
		n.Child(k, n.Path).Errorf("<< merges a mapping (<<: *anchor) or a list of them, not %s", kindName(v))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Suggest returns the valid word closest to k if k is a likely typo of it
// (at most two edits), or "".
func Suggest(k string, valid []string) string {
	best, bestD := "", 3
	for _, v := range valid {
		if d := editDistance(strings.ToLower(k), v); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (n Node) join(key string) string {
	if n.Path == "" {
		return key
	}
	return n.Path + "." + key
}

// Node returns the map itself as a Node.
func (m *Map) Node() Node { return m.n }

// Keys returns the keys in file order.
func (m *Map) Keys() []string { return m.keys }

// Get returns the value of key; ok is false when the key is absent.
func (m *Map) Get(key string) (Node, bool) {
	v, ok := m.vals[key]
	if !ok {
		return Node{d: m.n.d, Path: m.n.join(key)}, false
	}
	return m.n.Child(v, m.n.join(key)), true
}

// KeyNode returns a Node positioned at the key itself (for messages about it).
func (m *Map) KeyNode(key string) Node {
	return m.n.Child(m.knode[key], m.n.join(key))
}

// Require returns the value of key, recording a problem when it is absent.
func (m *Map) Require(key, what string) (Node, bool) {
	v, ok := m.Get(key)
	if !ok {
		m.n.Errorf("missing %q: %s", key, what)
	}
	return v, ok
}

// Seq reads n as a list.
func (n Node) Seq() ([]Node, bool) {
	y := n.resolve()
	if y == nil || y.Kind != yaml.SequenceNode {
		if y != nil {
			hint := ""
			if y.Kind == yaml.MappingNode && len(y.Content) > 0 && strings.HasPrefix(y.Content[0].Value, "-") {
				hint = fmt.Sprintf(" (%q: a space after the '-' makes a list item)", y.Content[0].Value)
			}
			n.Errorf("expected a list, got %s%s", kindName(y), hint)
		}
		return nil, false
	}
	out := make([]Node, len(y.Content))
	for i, c := range y.Content {
		if n.d.nodes > MaxNodes {
			n.Errorf("more than %d YAML nodes (alias expansion?)", MaxNodes)
			return nil, false
		}
		out[i] = n.Child(c, n.Path+"["+strconv.Itoa(i)+"]")
	}
	return out, true
}

// Scalar returns n's text; it records a problem when n is not a scalar or is empty.
func (n Node) Scalar() (string, bool) {
	y := n.resolve()
	if y == nil {
		return "", false
	}
	if y.Kind != yaml.ScalarNode {
		n.Errorf("expected a single value, got %s", kindName(y))
		return "", false
	}
	if y.Tag == "!!null" {
		n.Errorf("needs a value")
		return "", false
	}
	return y.Value, true
}

// IsScalar reports whether n is a scalar (after aliases).
func (n Node) IsScalar() bool {
	y := n.resolve()
	return y != nil && y.Kind == yaml.ScalarNode
}

// String reads a non-empty string.
func (n Node) String() (string, bool) {
	s, ok := n.Scalar()
	if ok && strings.TrimSpace(s) == "" {
		n.Errorf("needs a non-empty value")
		return "", false
	}
	return s, ok
}

// Name reads a name: letters, digits, '_', '-', '.', ':' and '#', not empty.
func (n Node) Name() (string, bool) {
	s, ok := n.String()
	if !ok {
		return "", false
	}
	if !ValidName(s) {
		n.Errorf("%q is not a valid name: use ASCII letters and digits, '_', '-', '.', ':' and '#'", s)
		return "", false
	}
	return s, true
}

// ValidName reports whether s may name a host, GPU, thread, topology, ...:
// letters, digits, '_', '-', '.', ':' and '#'.
func ValidName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r == ':' || r == '#' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// Int reads an integer in [lo, hi].
func (n Node) Int(lo, hi int64) (int64, bool) {
	s, ok := n.Scalar()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 10, 64)
	if err != nil {
		if f, ferr := strconv.ParseFloat(strings.TrimSpace(s), 64); ferr == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
			if f < float64(lo) || f > float64(hi) {
				n.Errorf("%s is out of range: expected an integer from %d to %d", s, lo, hi)
				return 0, false
			}
			return int64(f), true
		}
		n.Errorf("%q is not an integer: expected an integer from %d to %d", s, lo, hi)
		return 0, false
	}
	if v < lo || v > hi {
		n.Errorf("%d is out of range: expected an integer from %d to %d", v, lo, hi)
		return 0, false
	}
	return v, true
}

// Float reads a finite number in [lo, hi]; a trailing % divides by 100.
func (n Node) Float(lo, hi float64) (float64, bool) {
	s, ok := n.Scalar()
	if !ok {
		return 0, false
	}
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		n.Errorf("%q is not a number: expected one from %g to %g, written as 0.5, 1e6 or 50%%", s, lo, hi)
		return 0, false
	}
	if pct {
		v /= 100
	}
	if v < lo || v > hi {
		n.Errorf("%s is out of range: expected a number from %g to %g", s, lo, hi)
		return 0, false
	}
	return v, true
}

// Fraction reads a share: a number above 0 and at most 1, or a
// percentage above 0% and at most 100%.
func (n Node) Fraction(what string) (float64, bool) {
	s, ok := n.Scalar()
	if !ok {
		return 0, false
	}
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v <= 1) {
		n.Errorf("%s is not a valid %s: expected a fraction above 0 and at most 1, such as 0.8 or 80%%", s, what)
		return 0, false
	}
	return v, true
}

// Bool reads true or false.
func (n Node) Bool() (bool, bool) {
	s, ok := n.Scalar()
	if !ok {
		return false, false
	}
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	n.Errorf("%q is not a boolean: expected true or false", s)
	return false, false
}

// Enum reads one of the given words.
func (n Node) Enum(words ...string) (string, bool) {
	s, ok := n.Scalar()
	if !ok {
		return "", false
	}
	for _, w := range words {
		if s == w {
			return s, true
		}
	}
	n.Errorf("%q is not valid: expected one of %s", s, strings.Join(words, ", "))
	return "", false
}

// Positive is how Quantity checks a value's sign.
type Positive uint8

// Sign rules.
const (
	AnySign     Positive = iota // any finite value
	NonNeg                      // zero or more
	StrictlyPos                 // more than zero
)

// Quantity reads a number with a unit of kind k (see package units).
func (n Node) Quantity(k units.Kind, sign Positive) (float64, bool) {
	s, ok := n.Scalar()
	if !ok {
		return 0, false
	}
	v, err := units.Parse(s, k)
	if err != nil {
		n.Errorf("%v", err)
		return 0, false
	}
	switch {
	case sign == StrictlyPos && !(v > 0):
		n.Errorf("%s must be more than zero (for example %s)", s, k.Example())
		return 0, false
	case sign == NonNeg && v < 0:
		n.Errorf("%s must not be negative", s)
		return 0, false
	}
	// A duration or a rate with no unit would be in seconds, or bytes or
	// FLOPs a second: "duration: 10" meant 10 us as often as 10 s, and
	// "bandwidth: 50" 50 GB/s, not 50 B/s. Only 0 goes without one.
	if v != 0 && k != units.Bytes && k != units.FLOPs && units.Bare(s) {
		base := map[units.Kind]string{units.Duration: "s", units.Bandwidth: "B/s", units.FLOPRate: "FLOP/s"}[k]
		n.Errorf("%s has no unit: a %s needs one, such as %s (write %s %s if that is what is meant)", strings.TrimSpace(s), k, k.Example(), strings.TrimSpace(s), base)
		return 0, false
	}
	return v, true
}

// Time reads a duration into simulated time.
func (n Node) Time(sign Positive) (sim.Time, bool) {
	v, ok := n.Quantity(units.Duration, sign)
	if !ok {
		return 0, false
	}
	t, ok := sim.FromSeconds(v)
	if !ok {
		s, _ := n.Scalar()
		n.Errorf("%s is past the simulated time range (at most %d days)", s, int64(sim.MaxTime.Seconds()/86400))
		return 0, false
	}
	if sign == StrictlyPos && t == 0 {
		s, _ := n.Scalar()
		n.Errorf("%s is below the 1 ps time resolution", s)
		return 0, false
	}
	return t, true
}

// ByteCount reads a size in whole bytes.
func (n Node) ByteCount(sign Positive) (int64, bool) {
	v, ok := n.Quantity(units.Bytes, sign)
	if !ok {
		return 0, false
	}
	// A count of bytes written out whole is read whole: as a float,
	// 2^53 + 1 reads as 2^53, and 2^62 - 1 as 2^62.
	s, _ := n.Scalar()
	if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && i >= 0 && i < 1<<62 {
		return i, true
	}
	if v >= 1<<62 {
		n.Errorf("%s is too large: sizes must be under 4 EiB", s)
		return 0, false
	}
	if v != math.Trunc(v) || v == 0 && nonzeroMantissa(s) {
		// (1e-400 GiB reads as 0, as a float: still not whole.)
		n.Errorf("%s is not a whole number of bytes", s)
		return 0, false
	}
	return int64(v), true
}

// nonzeroMantissa reports whether the number s begins with has a digit
// other than 0 before its exponent.
func nonzeroMantissa(s string) bool {
	num := strings.TrimLeft(strings.TrimSpace(s), "+-")
	for _, r := range num {
		switch {
		case r >= '1' && r <= '9':
			return true
		case r == '0' || r == '.' || r == '_':
		default:
			return false // the exponent or the unit
		}
	}
	return false
}

var varRe = regexp.MustCompile(`\$\{([^}]*)\}`)

// VarRefs returns the names of the ${var} references in s.
func VarRefs(s string) []string {
	var out []string
	for _, m := range varRe.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func defined(vars map[string]string, name string) bool {
	_, ok := vars[name]
	return ok
}

// Substitute replaces every ${name} in the scalars below n (n included) with
// vars[name], recording a problem, at the field, for each undefined name,
// and marking in used (when not nil) each name it met. Keys are left alone.
// from, when not nil, says where each var's value was given ("sweep: at
// 12:21", "--set"); a problem later recorded at a scalar that took the
// value says so, since the fix is there and not where the value is used.
func (n Node) Substitute(vars map[string]string, names []string, used map[string]bool, from map[string]string) {
	var walk func(y *yaml.Node, path string, depth int)
	walk = func(y *yaml.Node, path string, depth int) {
		if y == nil || depth > 10_000 {
			return
		}
		n.d.nodes++
		switch y.Kind {
		case yaml.ScalarNode:
			if !strings.Contains(y.Value, "${") {
				return
			}
			var notes []string
			y.Value = varRe.ReplaceAllStringFunc(y.Value, func(ref string) string {
				name := ref[2 : len(ref)-1]
				if used != nil {
					used[name] = true
				}
				v, ok := vars[name]
				if f := from[name]; ok && f != "" && !slices.Contains(notes, ref+" from "+f) {
					notes = append(notes, ref+" from "+f)
				}
				if !ok && !ValidName(name) {
					// Not a name a var could have: advice to define it
					// could not be followed.
					msg := fmt.Sprintf("%s names no var: a var's name is ASCII letters, digits, '_', '-', '.', ':' and '#'", ref)
					if t := strings.TrimSpace(name); t != name && ValidName(t) && defined(vars, t) {
						msg += fmt.Sprintf(" (did you mean ${%s}?)", t)
					} else if strings.Contains(name, "${") {
						msg += " (vars are not replaced inside a reference)"
					}
					n.Child(y, path).Errorf("%s", msg)
					return ref
				}
				if !ok {
					msg := fmt.Sprintf("${%s} is not defined", name)
					if len(names) > 0 {
						msg += "; defined vars: " + strings.Join(names, ", ")
					} else {
						msg += "; define it under vars: or with --set " + name + "=VALUE"
					}
					n.Child(y, path).Errorf("%s", msg)
					return ref
				}
				return v
			})
			if len(notes) > 0 {
				if n.d.from == nil {
					n.d.from = map[*yaml.Node]string{}
				}
				n.d.from[y] = strings.Join(notes, ", ")
			}
			if y.Tag == "!!null" && y.Value != "" {
				y.Tag = "!!str"
			}
		case yaml.MappingNode:
			for i := 1; i < len(y.Content); i += 2 {
				key := y.Content[i-1].Value
				if path != "" {
					key = path + "." + key
				}
				n.keyRefs(y.Content[i-1], key, vars, used)
				walk(y.Content[i], key, depth+1)
			}
		case yaml.SequenceNode:
			for i, c := range y.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			}
		case yaml.DocumentNode:
			for _, c := range y.Content {
				walk(c, path, depth+1)
			}
		}
	}
	walk(n.n, n.Path, 0)
}

// keyRefs reports a key k (at path) that refers to vars: Substitute
// replaces them in values only. The vars count as used (the message is
// about the key, not about a var that nothing refers to).
func (n Node) keyRefs(k *yaml.Node, path string, vars map[string]string, used map[string]bool) {
	if k.Kind != yaml.ScalarNode || !strings.Contains(k.Value, "${") {
		return
	}
	refs := KeyVarRefs(k.Value)
	if len(refs) == 0 {
		return
	}
	known, meant := true, ""
	for _, name := range refs {
		if used != nil {
			used[name] = true
		}
		_, ok := vars[name]
		known = known && ok
	}
	msg := keyRefMessage(refs)
	if known {
		meant = varRe.ReplaceAllStringFunc(k.Value, func(ref string) string { return vars[ref[2:len(ref)-1]] })
		msg += fmt.Sprintf("; write the key itself (%q here)", meant)
	} else {
		msg += "; write the key itself"
	}
	n.Child(k, path).Errorf("%s", msg)
	if n.d.keyRef == nil {
		n.d.keyRef = map[*yaml.Node]string{}
	}
	n.d.keyRef[k] = meant
}

// KeyVarRefs names the vars key refers to (${name}, the name not empty).
func KeyVarRefs(key string) []string {
	var names []string
	for _, m := range varRe.FindAllStringSubmatch(key, -1) {
		if m[1] != "" && !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// keyRefMessage says that the vars a key refers to are not replaced.
func keyRefMessage(names []string) string {
	refs := make([]string, len(names))
	for i, n := range names {
		refs[i] = "${" + n + "}"
	}
	verb := "is"
	if len(refs) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("%s in a key %s not replaced: vars stand for values, not for keys", strings.Join(refs, ", "), verb)
}

// ErrCount returns the number of problems recorded so far in n's file.
func (n Node) ErrCount() int { return len(n.d.errs) }
