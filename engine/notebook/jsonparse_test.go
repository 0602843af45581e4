package notebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The hand-written parser must read JSON exactly as encoding/json does: the
// same documents accepted, and the same values in them. Its two deliberate
// differences are Python's json's, which Jupyter reads notebooks with:
//
//   - nesting deeper than maxDepth (1000, Python's recursion limit) is
//     refused, where encoding/json allows 10000;
//   - NaN, Infinity and -Infinity are read as numbers, as Python's
//     json.loads reads them (nbformat writes them): a document holding them
//     is compared as StrictJSON makes it, with null in their place.
//
// A number that does not fit a float64 (1e400) is accepted by both (Python
// reads it as infinity). Invalid UTF-8 never reaches it from Parse (which
// refuses it first); inside strings it is kept as given, where
// encoding/json decodes it to U+FFFD, so values are compared on valid UTF-8
// only.

// testNotebooks are the notebooks under testdata, nbformat's own files.
func testNotebooks(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(testdataDir, "*.ipynb"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no notebooks in %s (%v)", testdataDir, err)
	}
	var out [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// jsonTokens lists the document's tokens in order as encoding/json's
// Decoder reads them: delimiters, object keys and values, numbers as their
// literal text.
func jsonTokens(data []byte) ([]json.Token, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var toks []json.Token
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return toks, nil
		}
		if err != nil {
			return nil, err
		}
		toks = append(toks, tok)
	}
}

// tokens lists node n and its children as jsonTokens does.
func (p *parser) tokens(n int32, out []json.Token) []json.Token {
	nd := &p.nodes[n]
	switch nd.kind {
	case kObject:
		out = append(out, json.Delim('{'))
		for c := nd.first; c >= 0; c = p.nodes[c].next {
			out = p.tokens(c, out)
		}
		return append(out, json.Delim('}'))
	case kArray:
		out = append(out, json.Delim('['))
		for c := nd.first; c >= 0; c = p.nodes[c].next {
			out = p.tokens(c, out)
		}
		return append(out, json.Delim(']'))
	case kString:
		return append(out, p.text(n))
	case kNumber:
		if nonFinite(p.raw(n)) {
			return append(out, nil) // StrictJSON's null
		}
		return append(out, json.Number(p.raw(n)))
	case kTrue:
		return append(out, true)
	case kFalse:
		return append(out, false)
	}
	return append(out, nil)
}

// nonFinite reports whether a number's literal is NaN, Infinity or
// -Infinity.
func nonFinite(raw []byte) bool {
	switch string(raw) {
	case "NaN", "Infinity", "-Infinity":
		return true
	}
	return false
}

// checkAgainstEncodingJSON fails t when parseJSON and encoding/json disagree
// on data beyond the differences documented above.
func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	p, err := parseJSON(bytes.Clone(data))
	strict := StrictJSON(data)
	valid := json.Valid(strict)
	if err != nil {
		if !valid {
			return
		}
		if !strings.Contains(err.Error(), "nested too deeply") || jsonDepth(data) <= maxDepth {
			t.Fatalf("parseJSON refuses what encoding/json accepts: %v\n%q", err, data)
		}
		return
	}
	if !valid {
		t.Fatalf("parseJSON accepts what encoding/json refuses (%v):\n%q", json.Unmarshal(strict, new(any)), data)
	}
	// Every node's span is a JSON value of its own: raw values (metadata,
	// mime data) are copied through by span.
	for i := range p.nodes {
		if raw := p.raw(int32(i)); !json.Valid(StrictJSON(raw)) {
			t.Fatalf("node %d (%s) spans %q, not a JSON value, in\n%q", i, p.nodes[i].kind, raw, data)
		}
		if nd, raw := p.nodes[i], p.raw(int32(i)); nd.kind == kNumber && nd.float != (bytes.ContainsAny(raw, ".eE") || nonFinite(raw)) {
			t.Fatalf("number %s: float is %v", p.raw(int32(i)), nd.float)
		}
	}
	if !utf8.Valid(data) {
		return
	}
	want, err := jsonTokens(strict)
	if err != nil {
		t.Fatalf("encoding/json's Decoder refuses what json.Valid accepts: %v\n%q", err, data)
	}
	got := p.tokens(0, nil)
	if len(got) != len(want) {
		t.Fatalf("parseJSON reads %d tokens, encoding/json %d:\n got %#v\nwant %#v\nin %q", len(got), len(want), got, want, data)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("token %d: parseJSON reads %#v, encoding/json %#v, in\n%q", i, got[i], want[i], data)
		}
	}
}

// jsonSeeds are inputs at the edges of the grammar, for the fuzzer to start
// from and for TestParseJSONAgainstEncodingJSON to check every run.
var jsonSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `true`, `false`, `null`, " \t\r\n[ ] ",
	`{"a":1,"a":2}`, `{"":""}`, `[1,[2,[3,{}]]]`, `{"a":{"b":[{"c":null}]}}`,
	`-1.5e-7`, `1E+2`, `0.0e-0`, `123456789012345678901234567890`, `1e400`, `-1e-400`, `1.7976931348623157e308`,
	`"\"\\\/\b\f\n\r\t"`, `"\u0000\u001f\u00e9\u2028"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`,
	`"\ud800\u0041"`, `"\ud800\ud800"`, `"\ud800\\u"`, `"\uD83D\uDE00"`, `"é😀"`,
	// Read as Python's json reads them, or refused as it refuses them.
	`NaN`, `Infinity`, `-Infinity`, `[NaN]`, `{"a":[Infinity,-Infinity,NaN]}`, `"NaN"`,
	`nan`, `Inf`, `-Inf`, `-NaN`, `+Infinity`, `NaNx`, `[NaN NaN]`, `Infinityy`,
	// Refused by both.
	`01`, `-`, `1.`, `.5`, `1e`, `+1`, `0x1`,
	`[1,]`, `{"a":1,}`, `{a:1}`, `{'a':1}`, `[`, `{"a"`, `{"a":}`, `"\x"`, `"\u12"`, "\"\x01\"", "\"a\tb\"",
	"\ufeff{}", `{} {}`, `[] x`, `tru`, `nul`, `truex`, "\x00", "[1\x00]", `"`, `"\`,
	"\"\xff\"", "[\"\xc3\x28\"]",
}

func TestParseJSONAgainstEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range jsonSeeds {
		checkAgainstEncodingJSON(t, []byte(s))
	}
	for _, data := range testNotebooks(t) {
		checkAgainstEncodingJSON(t, data)
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, err := parseJSON([]byte(deep)); err == nil {
		t.Errorf("nesting %d deep was accepted", maxDepth+1)
	}
	checkAgainstEncodingJSON(t, []byte(deep))
	checkAgainstEncodingJSON(t, []byte(strings.Repeat("[", maxDepth)+strings.Repeat("]", maxDepth)))
}

// FuzzParseJSON checks the parser against encoding/json on any input: both
// accept or both refuse (but for the documented differences), and what is
// accepted reads as the same values.
func FuzzParseJSON(f *testing.F) {
	for _, data := range testNotebooks(f) {
		f.Add(data)
	}
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstEncodingJSON)
}
