package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Normalizer rewrites what changes from one run of the same calls to the
// next (ids, times, execution counts, temporary directories) so that a
// recorded result and a replayed one can be compared as text.
//
// Ids are not erased but named in the order they first appear: the first
// kernel id a normalizer sees becomes <kernel-1>, the first cell id
// <cell-1>. One normalizer follows the recording, another the replay, and
// both see the same calls in the same order, so a recorded id and the
// replayed id that took its place get the same name, and an id reused where
// the recording had a new one (or the other way round) shows as a
// difference.
type Normalizer struct {
	ids   map[string]string // raw id -> its name
	raws  map[string]string // name -> raw id
	count map[string]int    // kind -> ids named so far
	roots *regexp.Regexp    // paths under the roots, written as <tmp>
}

// NewNormalizer returns a normalizer that also writes paths under the given
// directories (a replay's root directory, the temporary directory) as
// <tmp>, as it does those under /tmp.
func NewNormalizer(roots ...string) *Normalizer {
	n := &Normalizer{ids: map[string]string{}, raws: map[string]string{}, count: map[string]int{}}
	var alts []string
	for _, r := range roots {
		if r = strings.TrimRight(r, `/\`); r != "" {
			alts = append(alts, regexp.QuoteMeta(r))
		}
	}
	if len(alts) > 0 {
		// Longer roots first, so that a root inside another is not cut short.
		sort.Slice(alts, func(i, j int) bool { return len(alts[i]) > len(alts[j]) })
		n.roots = regexp.MustCompile(`(?:` + strings.Join(alts, "|") + `)\b` + pathTail)
	}
	return n
}

// The patterns of what varies between runs.
var (
	// A UUID: kernel ids, Jupyter session ids.
	uuidPattern = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	// A cell id as the engine makes them (nbformat's uuid4().hex[:8]).
	// In free text only those with a letter count (an eight-digit number is
	// a number); an all-digit one is an id once seen where only ids go
	// (Learn, a listing's ID column).
	hex8Pattern = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
	// Times as results print them: 2026-11-30 17:49:03, RFC 3339.
	timePattern = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`)
	// Execution counts in text: read_cell's header, IPython tracebacks.
	countPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(execution count: )\d+()`),
		regexp.MustCompile(`((?:Cell|Input) In \[)\d+(\])`),
		regexp.MustCompile(`(<ipython-input-)\d+(-)`),
	}
	// Paths under the usual temporary directories (not /usr/tmp: what
	// comes before the path is kept in the first group).
	tempPathPattern = regexp.MustCompile(`(^|[^\w/.~-])(?:/private)?(?:/tmp|/var/folders|/var/tmp)\b` + pathTail)
)

// pathTail is the rest of a path after a directory: up to a blank, a quote
// or punctuation that ends a path in a sentence.
const pathTail = `(?:[/\\][^\s"'\\,;:)\]}]*)?`

// volatileKeys are the columns of listings (and their keys in structured
// rows) whose values differ between runs of the same calls: times, sizes
// (a notebook's metadata names the Python that ran it), execution counts.
var volatileKeys = map[string]bool{
	"Last_Modified": true, "Last_Activity": true, "Size": true, "Count": true,
	"execution_count": true,
}

// idKeys are the keys (and listing columns) whose values are ids whatever
// they look like; the kind is "" where either kind may appear.
var idKeys = map[string]string{
	"id": "cell", "cell_id": "cell", "io.jupyter-mcp/cell_id": "cell",
	"source_cell_id": "cell", "target_cell_id": "cell",
	"kernel_id": "kernel", "Kernel_ID": "kernel", "ID": "",
}

// name returns the name of a raw id of the given kind, naming it if new.
func (n *Normalizer) name(kind, raw string) string {
	if s, ok := n.ids[raw]; ok {
		return s
	}
	n.count[kind]++
	s := fmt.Sprintf("<%s-%d>", kind, n.count[kind])
	n.ids[raw], n.raws[s] = s, raw
	return s
}

// Name is the name this normalizer gave the raw id, if it has seen it.
func (n *Normalizer) Name(raw string) (string, bool) {
	s, ok := n.ids[raw]
	if !ok {
		s, ok = n.ids[strings.ToLower(raw)]
	}
	return s, ok
}

// Raw is the raw id this normalizer gave name, if any: on the replay's
// side, the id that took the place of a recorded one.
func (n *Normalizer) Raw(name string) (string, bool) {
	raw, ok := n.raws[name]
	return raw, ok
}

// learn names v if it is an id under key.
func (n *Normalizer) learn(key, v string) {
	kind, ok := idKeys[key]
	if !ok {
		return
	}
	switch {
	case len(v) == 36 && uuidPattern.MatchString(v):
		n.name("kernel", strings.ToLower(v))
	case len(v) == 8 && hex8Pattern.MatchString(v) && kind != "kernel":
		n.name("cell", v)
	}
}

// Text normalizes a text: ids by name, times as <time>, execution counts as
// <n>, paths under the roots and temporary directories as <tmp>, and the
// volatile columns of tab-separated listings as <*>.
func (n *Normalizer) Text(s string) string {
	s = n.tables(s)
	if n.roots != nil {
		s = n.roots.ReplaceAllString(s, "<tmp>")
	}
	s = tempPathPattern.ReplaceAllString(s, "${1}<tmp>")
	s = timePattern.ReplaceAllString(s, "<time>")
	for _, p := range countPatterns {
		s = p.ReplaceAllString(s, "${1}<n>${2}")
	}
	s = uuidPattern.ReplaceAllStringFunc(s, func(id string) string { return n.name("kernel", strings.ToLower(id)) })
	return hex8Pattern.ReplaceAllStringFunc(s, func(id string) string {
		if _, known := n.ids[id]; known || strings.ContainsAny(id, "abcdef") {
			return n.name("cell", id)
		}
		return id
	})
}

// tables blanks the volatile columns of tab-separated listings (a line of
// tab-separated column names, then the lines with as many fields) and
// learns the ids of their ID columns.
func (n *Normalizer) tables(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	lines := strings.Split(s, "\n")
	var header []string
	for i, l := range lines {
		fields := strings.Split(l, "\t")
		switch {
		case len(fields) < 2:
			header = nil
		case header != nil && len(fields) == len(header):
			for j, f := range fields {
				if volatileKeys[header[j]] {
					fields[j] = "<*>"
				} else {
					n.learn(header[j], f)
				}
			}
			lines[i] = strings.Join(fields, "\t")
		default:
			header = fields
		}
	}
	return strings.Join(lines, "\n")
}

// Learn names the ids found under id keys of a JSON value (structured
// content, _meta, arguments) before its text is read, so that an id is
// recognised in the text whatever it looks like.
func (n *Normalizer) Learn(raw json.RawMessage) {
	v, ok := decodeJSON(raw)
	if !ok {
		return
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(k, v[k])
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case string:
			n.learn(key, v)
		}
	}
	walk("", v)
}

// JSON normalizes a JSON value: its strings as Text does, execution counts
// and the volatile keys of rows as <*>. The result is JSON with sorted
// keys; what does not parse is compared as text.
func (n *Normalizer) JSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	v, ok := decodeJSON(raw)
	if !ok {
		return n.Text(string(raw))
	}
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for _, k := range sortedKeys(v) {
				if volatileKeys[k] && v[k] != nil {
					out[k] = "<*>"
					continue
				}
				out[k] = walk(k, v[k])
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = walk(key, e)
			}
			return out
		case string:
			n.learn(key, v)
			return n.Text(v)
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // <cell-1> reads better than \u003ccell-1\u003e
	if err := enc.Encode(walk("", v)); err != nil {
		return n.Text(string(raw))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// decodeJSON decodes raw keeping numbers as written.
func decodeJSON(raw json.RawMessage) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
