package observe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A Query is a search over the calls of the timeline, as typed after `/`:
// words match anywhere in a call (case-insensitive), and terms of the form
// key:value narrow by a field. Every word and every term must match (AND);
// within one term, values separated by `|` are alternatives (OR).
//
//	tool:NAME        the tool, a glob (tool:*cell*, tool:{read,edit}_cell)
//	status:STATUS    ok, error, cell-error, tool-error, protocol-error,
//	                 denied, cancelled, running or held (error is any of
//	                 the three errors)
//	session:PREFIX   the session id or its client's name begins so
//	cell:ID|INDEX    the acted-on cell, or a cell_… argument naming it
//	kind:KIND        the result's structuredContent kind, a glob
//	took:>1s         the run's duration (time held left out): >, >=,
//	                 <, <= and a Go duration
//	                 (a bare duration means at least that long)
//
// A word may be quoted ("two words") to match as a phrase, or to search for
// text that looks like a term.
type Query struct {
	Words    []string // lower case
	Tools    [][]string
	Statuses [][]string
	Sessions [][]string // lower case
	Cells    [][]string
	Kinds    [][]string
	Took     []TookBound

	// AsText are words that look like terms of no known name (stauts:ok,
	// ValueError:): they are searched as text, and a reader may say so.
	AsText []string
}

// TookBound is one took: term.
type TookBound struct {
	Op string // ">", ">=", "<", "<="
	D  time.Duration
}

func (b TookBound) holds(d time.Duration) bool {
	switch b.Op {
	case ">":
		return d > b.D
	case ">=":
		return d >= b.D
	case "<":
		return d < b.D
	}
	return d <= b.D
}

// Statuses a status: term accepts. error is any failure: cell-error (the
// call answered, the code it ran raised), tool-error (a tool result with
// isError) or protocol-error (a JSON-RPC error with no result); ok is a
// call that answered and whose code raised nothing.
var queryStatuses = []string{"ok", "error", "cell-error", "tool-error", "protocol-error", "denied", "cancelled", "running", "held"}

// queryKeys are the term names, in the order the help lists them.
var queryKeys = []string{"tool", "status", "session", "cell", "kind", "took"}

// Empty reports whether the query has nothing to match (every call passes).
func (q *Query) Empty() bool {
	return len(q.Words) == 0 && len(q.Tools) == 0 && len(q.Statuses) == 0 && len(q.Sessions) == 0 &&
		len(q.Cells) == 0 && len(q.Kinds) == 0 && len(q.Took) == 0
}

// ParseQuery parses what was typed after `/`. Its error says which term is
// wrong and what it accepts.
func ParseQuery(s string) (Query, error) {
	var q Query
	toks, err := splitQuery(s)
	if err != nil {
		return Query{}, err
	}
	for _, t := range toks {
		if t.quoted {
			q.Words = append(q.Words, strings.ToLower(t.text))
			continue
		}
		key, val, ok := strings.Cut(t.text, ":")
		if !ok || !isTermKey(key) {
			q.Words = append(q.Words, strings.ToLower(t.text))
			continue
		}
		key = strings.ToLower(key)
		if !contains(queryKeys, key) {
			q.AsText = append(q.AsText, key+":")
			q.Words = append(q.Words, strings.ToLower(t.text))
			continue
		}
		if val == "" {
			return Query{}, fmt.Errorf("%s: needs a value", key)
		}
		alts := strings.Split(val, "|")
		for _, a := range alts {
			if a == "" {
				return Query{}, fmt.Errorf("%s:%s has an empty alternative", key, val)
			}
		}
		switch key {
		case "tool", "kind":
			for _, a := range alts {
				if !doublestar.ValidatePattern(a) {
					return Query{}, fmt.Errorf("%s:%s is not a valid glob", key, a)
				}
			}
			if key == "tool" {
				q.Tools = append(q.Tools, alts)
			} else {
				q.Kinds = append(q.Kinds, alts)
			}
		case "status":
			for i, a := range alts {
				a = strings.ToLower(a)
				if !contains(queryStatuses, a) {
					return Query{}, fmt.Errorf("status:%s is not a status; use one of %s", a, strings.Join(queryStatuses, ", "))
				}
				alts[i] = a
			}
			q.Statuses = append(q.Statuses, alts)
		case "session":
			for i, a := range alts {
				alts[i] = strings.ToLower(a)
			}
			q.Sessions = append(q.Sessions, alts)
		case "cell":
			q.Cells = append(q.Cells, alts)
		case "took":
			if len(alts) > 1 {
				return Query{}, fmt.Errorf("took:%s: one bound per term (write took:>1s took:<5s for a range)", val)
			}
			b, err := parseTook(val)
			if err != nil {
				return Query{}, err
			}
			q.Took = append(q.Took, b)
		}
	}
	return q, nil
}

// isTermKey reports whether key (what comes before a colon) looks like a
// term's name: a bare word. Anything else with a colon (a path, 12:30) is
// text, and so are URLs.
func isTermKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	// http:, https:, file: and the like start URLs, not terms.
	switch strings.ToLower(key) {
	case "http", "https", "file", "ws", "wss", "data", "mailto":
		return false
	}
	return true
}

func parseTook(val string) (TookBound, error) {
	b := TookBound{Op: ">="}
	rest := val
	for _, op := range []string{">=", "<=", ">", "<", "="} {
		if strings.HasPrefix(val, op) {
			b.Op, rest = op, val[len(op):]
			break
		}
	}
	if b.Op == "=" {
		b.Op = ">="
	}
	d, err := time.ParseDuration(rest)
	if err != nil || d < 0 {
		return TookBound{}, fmt.Errorf("took:%s: want a comparison and a duration, like took:>1s or took:<200ms", val)
	}
	b.D = d
	return b, nil
}

// queryToken is one word of a query, and whether it was quoted.
type queryToken struct {
	text   string
	quoted bool
}

// splitQuery splits on spaces, keeping "quoted phrases" whole.
func splitQuery(s string) ([]queryToken, error) {
	var out []queryToken
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unclosed quote: %s", s[i:])
			}
			if end > 0 {
				out = append(out, queryToken{text: s[i+1 : i+1+end], quoted: true})
			}
			i += end + 2
		default:
			end := strings.IndexAny(s[i:], " \t")
			if end < 0 {
				end = len(s) - i
			}
			out = append(out, queryToken{text: s[i : i+end]})
			i += end
		}
	}
	return out, nil
}

// Match reports whether c passes every word and term of q. sessions names
// each session's client (State.Sessions); now is the clock the durations of
// running and held calls are measured at.
func (q *Query) Match(c *Call, sessions map[string]string, now time.Time) bool {
	if len(q.Words) > 0 {
		hay := c.haystack()
		for _, w := range q.Words {
			if !strings.Contains(hay, w) {
				return false
			}
		}
	}
	for _, alts := range q.Tools {
		if !anyAlt(alts, func(a string) bool { return globMatch(a, c.Tool) }) {
			return false
		}
	}
	for _, alts := range q.Statuses {
		if !anyAlt(alts, func(a string) bool { return statusIs(c, a) }) {
			return false
		}
	}
	for _, alts := range q.Sessions {
		client := strings.ToLower(sessions[c.Session])
		id := strings.ToLower(c.Session)
		if !anyAlt(alts, func(a string) bool { return strings.HasPrefix(id, a) || (client != "" && strings.HasPrefix(client, a)) }) {
			return false
		}
	}
	for _, alts := range q.Cells {
		if !anyAlt(alts, func(a string) bool { return c.actsOnCell(a) }) {
			return false
		}
	}
	for _, alts := range q.Kinds {
		kind := c.resultKind()
		if !anyAlt(alts, func(a string) bool { return kind != "" && globMatch(a, kind) }) {
			return false
		}
	}
	if len(q.Took) > 0 {
		d := c.RunTime(now)
		for _, b := range q.Took {
			if !b.holds(d) {
				return false
			}
		}
	}
	return true
}

// ErrorKind tells the two kinds of failed call apart: "tool" for a tool
// result with isError (the agent got an answer saying what went wrong),
// "protocol" for a JSON-RPC error (no result at all), "" otherwise.
func (c *Call) ErrorKind() string {
	if c.Status != event.CallError {
		return ""
	}
	if c.IsError || c.Error == "" {
		return "tool"
	}
	return "protocol"
}

func statusIs(c *Call, s string) bool {
	switch s {
	case "ok":
		return c.Status == event.CallOK && !c.CellFailed()
	case "error":
		return c.Status == event.CallError || c.CellFailed()
	case "cell-error":
		return c.CellFailed()
	case "tool-error":
		return c.ErrorKind() == "tool"
	case "protocol-error":
		return c.ErrorKind() == "protocol"
	}
	return string(c.Status) == s
}

func globMatch(pattern, s string) bool {
	ok, err := doublestar.Match(strings.ToLower(pattern), strings.ToLower(s))
	return ok && err == nil
}

func anyAlt(alts []string, f func(string) bool) bool {
	for _, a := range alts {
		if f(a) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// actsOnCell reports whether the call acted on the cell named by a: its
// acted-on cell id begins with a, or an argument named cell_… holds it (an
// index for a number, an id otherwise; lists count when they hold it).
func (c *Call) actsOnCell(a string) bool {
	la := strings.ToLower(a)
	if c.CellID != "" && strings.HasPrefix(strings.ToLower(c.CellID), la) {
		return true
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(c.Args, &args) != nil {
		return false
	}
	_, numErr := strconv.Atoi(a)
	for k, v := range args {
		if !strings.HasPrefix(k, "cell_") {
			continue
		}
		isIndex := strings.Contains(k, "ind")
		isID := strings.HasSuffix(k, "id") || strings.Contains(k, "_id_") || strings.HasSuffix(k, "ids") || strings.Contains(k, "_ids_")
		var vals []json.RawMessage
		if bytes.HasPrefix(bytes.TrimSpace(v), []byte("[")) {
			_ = json.Unmarshal(v, &vals)
		} else {
			vals = []json.RawMessage{v}
		}
		for _, x := range vals {
			switch {
			case isIndex && numErr == nil:
				var n json.Number
				if json.Unmarshal(x, &n) == nil && n.String() == a {
					return true
				}
			case isID:
				var s string
				if json.Unmarshal(x, &s) == nil && s != "" && strings.HasPrefix(strings.ToLower(s), la) {
					return true
				}
			}
		}
	}
	return false
}

// resultKind is the kind of the call's structuredContent, "" when it has
// none.
func (c *Call) resultKind() string {
	c.index()
	return c.kind
}

// haystack is what words are searched in: the tool, the error, and every
// key and string, number or boolean of the arguments, the text content,
// structuredContent and _meta, in lower case. JSON is searched by its
// values, not its encoding, so a quote or a newline in a cell's source is
// found as typed.
func (c *Call) haystack() string {
	c.index()
	return c.hay
}

// ForgetSearchIndex drops the search text of every call. The index holds
// a lower-case copy of what each call keeps, so a reader drops it when it
// stops searching; the next search builds it again.
func (s *State) ForgetSearchIndex() {
	for _, c := range s.Calls {
		c.indexed, c.hay, c.kind = false, "", ""
	}
}

// index builds the call's search text and kind once per change of the call
// (applyCall clears them).
func (c *Call) index() {
	if c.indexed {
		return
	}
	var b strings.Builder
	b.Grow(len(c.Tool) + len(c.Error) + len(c.Args) + len(c.Text) + len(c.Structured) + len(c.Meta) + 8)
	b.WriteString(c.Tool)
	b.WriteByte('\n')
	if c.Error != "" {
		b.WriteString(c.Error)
		b.WriteByte('\n')
	}
	if c.CellError != "" {
		b.WriteString(c.CellError)
		b.WriteByte('\n')
	}
	jsonValues(&b, c.Args)
	if c.Text != "" {
		b.WriteString(c.Text)
		b.WriteByte('\n')
	}
	jsonValues(&b, c.Structured)
	jsonValues(&b, c.Meta)
	c.hay = strings.ToLower(b.String())
	c.kind = topLevelKind(c.Structured)
	c.indexed = true
}

// topLevelKind is the string value of the "kind" key of the object raw
// holds, "" when it has none. It scans to that key rather than decode
// what may be a large document.
func topLevelKind(raw json.RawMessage) string {
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			j := i + 1
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(raw) {
				return ""
			}
			key := raw[i : j+1]
			i = j
			if depth != 1 || string(key) != `"kind"` {
				continue
			}
			// A key is followed by a colon; a value is not.
			k := j + 1
			for k < len(raw) && (raw[k] == ' ' || raw[k] == '\n' || raw[k] == '\t' || raw[k] == '\r') {
				k++
			}
			if k >= len(raw) || raw[k] != ':' {
				continue
			}
			var kind string
			dec := json.NewDecoder(bytes.NewReader(raw[k+1:]))
			if dec.Decode(&kind) == nil {
				return kind
			}
			return ""
		}
	}
	return ""
}

// jsonValues writes every key and scalar of raw to b, one a line: strings
// unescaped, numbers and literals as written. It scans rather than decodes
// (a decoder's tokens cost a second per 10 MB, a keystroke's worth of a full
// timeline), and it does not validate: a document cut for size gives what
// it has, an unterminated string as it is.
func jsonValues(b *strings.Builder, raw json.RawMessage) {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '"':
			j, escaped := i+1, false
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(raw) {
				b.Write(raw[i+1:])
				b.WriteByte('\n')
				return
			}
			if escaped {
				writeUnquoted(b, raw[i:j+1])
			} else {
				b.Write(raw[i+1 : j])
			}
			b.WriteByte('\n')
			i = j + 1
		case c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z':
			j := i
			for j < len(raw) && isScalarByte(raw[j]) {
				j++
			}
			b.Write(raw[i:j])
			b.WriteByte('\n')
			i = j
		default:
			i++
		}
	}
}

// writeUnquoted writes the JSON string q unescaped, or as it is when it is
// not a valid one.
func writeUnquoted(b *strings.Builder, q []byte) {
	var str string
	if json.Unmarshal(q, &str) == nil {
		b.WriteString(str)
		return
	}
	b.Write(q[1 : len(q)-1])
}

// isScalarByte reports whether c may be part of a JSON number or literal.
func isScalarByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
