package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// detailPane shows the selected call: arguments, text content,
// structuredContent as a foldable tree, _meta with cache TTLs, the acted-on
// cell and the schema check.
type detailPane struct {
	callID   string
	version  string          // what the tree was built from; rebuilt when it changes
	root     *jsonNode       // structuredContent parsed, nil when absent
	parseErr string          // why structuredContent could not be parsed
	expanded map[string]bool // tree paths the person folded or unfolded
	cursor   int             // index among visible tree rows
	offset   int             // first visible line
}

// jsonNode is one value of a JSON document, keys kept in document order.
type jsonNode struct {
	key      string // object key or [index]; "" for the root
	path     string
	kind     byte   // '{', '[', 's' string, 'n' number, 'b' bool, '0' null
	value    string // scalars: the JSON text
	children []*jsonNode
}

// parseJSONTree parses raw into a tree keeping object keys in order.
func parseJSONTree(raw []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := parseJSONValue(dec, "", "$")
	if err != nil {
		return nil, err
	}
	return n, nil
}

func parseJSONValue(dec *json.Decoder, key, path string) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &jsonNode{key: key, path: path}
	switch t := tok.(type) {
	case json.Delim:
		n.kind = byte(t)
		for i := 0; dec.More(); i++ {
			ck := fmt.Sprintf("[%d]", i)
			if t == '{' {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				ck, _ = kt.(string)
			}
			child, err := parseJSONValue(dec, ck, path+"/"+ck)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, child)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.kind = 's'
		b, _ := json.Marshal(t)
		n.value = string(b)
	case json.Number:
		n.kind, n.value = 'n', t.String()
	case bool:
		n.kind, n.value = 'b', fmt.Sprint(t)
	case nil:
		n.kind, n.value = '0', "null"
	}
	return n, nil
}

// treeRow is one visible row of the tree.
type treeRow struct {
	node  *jsonNode
	depth int
}

// isOpen says whether a container is unfolded: the person's choice, else
// open for the first two levels.
func (p *detailPane) isOpen(n *jsonNode, depth int) bool {
	if v, ok := p.expanded[n.path]; ok {
		return v
	}
	return depth < 2
}

// rows flattens the unfolded part of the tree.
func (p *detailPane) rows() []treeRow {
	var out []treeRow
	var walk func(n *jsonNode, depth int)
	walk = func(n *jsonNode, depth int) {
		out = append(out, treeRow{n, depth})
		if (n.kind == '{' || n.kind == '[') && p.isOpen(n, depth) {
			for _, c := range n.children {
				walk(c, depth+1)
			}
		}
	}
	if p.root != nil {
		walk(p.root, 0)
	}
	return out
}

// syncDetail rebuilds the tree when the selected call changed or finished.
func (m *Model) syncDetail() {
	p := &m.detail
	c := m.selectedCall()
	if c == nil {
		*p = detailPane{expanded: map[string]bool{}}
		return
	}
	orig := m.resendPair(c)
	version := c.ID + "|" + string(c.Status) + "|" + fmt.Sprint(len(c.Structured), orig != nil)
	if version == p.version {
		return
	}
	if c.ID != p.callID {
		p.expanded = map[string]bool{}
		p.cursor, p.offset = 0, 0
		m.notebook.showCall(m, c)
	}
	p.callID, p.version, p.root, p.parseErr = c.ID, version, nil, ""
	// A resend beside its original shows both results as text: the
	// arrows scroll it, there is no tree to fold.
	if len(c.Structured) > 0 && orig == nil {
		if c.StructuredCut > 0 {
			p.parseErr = fmt.Sprintf("structuredContent is %d bytes; too large to show as a tree", len(c.Structured)+c.StructuredCut)
		} else if root, err := parseJSONTree(c.Structured); err != nil {
			p.parseErr = "structuredContent is not valid JSON: " + err.Error()
		} else {
			p.root = root
		}
	}
	p.cursor = clamp(p.cursor, 0, max(len(p.rows())-1, 0))
}

func (p *detailPane) title(m *Model) string {
	if m.held.mode == editArgs {
		return " Edit " + m.held.callID + " "
	}
	if c := m.selectedCall(); c != nil {
		if awaitsDecision(c) {
			return m.cardTitle(c)
		}
		if m.resendPair(c) != nil {
			return " Resend of " + c.ResendOf + " "
		}
		return " Call " + c.ID + " "
	}
	return " Call "
}

func (p *detailPane) handleKey(m *Model, msg tea.KeyMsg) {
	if awaitsDecision(m.selectedCall()) && m.scrollCard(msg) {
		return // a held call's card scrolls (card.go)
	}
	k := m.keys
	rows := p.rows()
	switch {
	case key.Matches(msg, k.Up):
		// Without a tree the arrows scroll the text.
		if p.root == nil || p.cursor == 0 {
			p.offset--
		}
		p.cursor--
	case key.Matches(msg, k.Down):
		if p.root == nil {
			p.offset++
		}
		p.cursor++
	case key.Matches(msg, k.PageUp):
		p.offset -= m.layout().detailH - 2
		p.cursor -= m.layout().detailH - 2
	case key.Matches(msg, k.PageDown):
		p.offset += m.layout().detailH - 2
		p.cursor += m.layout().detailH - 2
	case key.Matches(msg, k.Top):
		p.cursor, p.offset = 0, 0
	case key.Matches(msg, k.Bottom):
		p.cursor = len(rows) - 1
	case key.Matches(msg, k.Toggle):
		if p.cursor >= 0 && p.cursor < len(rows) {
			r := rows[p.cursor]
			if r.node.kind == '{' || r.node.kind == '[' {
				p.expanded[r.node.path] = !p.isOpen(r.node, r.depth)
			}
		}
	}
	p.cursor = clamp(p.cursor, 0, max(len(p.rows())-1, 0))
	// Keep the cursor row in view.
	lines, treeStart := m.detailLines(m.layout().rightW - 2)
	h := m.layout().detailH - 2
	if p.root != nil {
		at := treeStart + p.cursor
		if at < p.offset {
			p.offset = at
		}
		if at >= p.offset+h {
			p.offset = at - h + 1
		}
	}
	p.offset = clamp(p.offset, 0, max(len(lines)-h, 0))
}

// Bounds of the detail sections, in lines.
const (
	detailArgsLines = 20
	detailTextLines = 20
)

// detailLines builds every line of the detail pane for the selected call,
// the words of the search highlighted, and says where the tree starts.
func (m *Model) detailLines(w int) ([]string, int) {
	lines, treeStart := m.callDetailLines(w)
	if m.calls.searching() {
		lines = highlightWords(lines, m.calls.query.Words, m.styles.Match)
	}
	return lines, treeStart
}

// callDetailLines builds the lines of detailLines.
func (m *Model) callDetailLines(w int) ([]string, int) {
	s := m.styles
	c := m.selectedCall()
	if c == nil {
		return []string{s.Muted.Render("select a call in the timeline")}, 0
	}
	if orig := m.resendPair(c); orig != nil {
		lines := m.resendLines(orig, c, w)
		return lines, len(lines)
	}
	var out []string
	add := func(ls ...string) { out = append(out, ls...) }
	section := func(t string) { add(s.Title.Render(t)) }

	dur := m.detailTimes(c) // timeline.go: the run, and the time held
	session := "  session " + c.Session
	if client := m.st.Sessions[c.Session]; client != "" {
		session += " (" + client + ")"
	} else if c.Preview != nil && c.Preview.Client != "" {
		session += " (" + c.Preview.Client + ")"
	}
	if c.Session == "" && c.Summary != "" {
		session = "  the person" // an undo made at the workbench
	}
	head := s.Bold.Render(c.Tool) + "  " + m.statusLabel(c.Status) + "  " + dur + s.Muted.Render(session)
	if c.Destructive {
		head += s.Warning.Render("  destructive")
	}
	add(head)
	if c.Summary != "" {
		add(c.Summary)
	}
	if c.Undoable && c.Status != event.CallRunning && c.Status != event.CallHeld {
		add(s.Muted.Render("u u undoes its change to the notebook"))
	}
	if c.Status == event.CallHeld {
		add(m.pausedLines(c)...)
	}
	if c.Progress != "" && c.Status == event.CallRunning {
		add(s.Muted.Render("progress: ") + c.Progress)
	}
	if c.Task != nil {
		line := s.Muted.Render("task: ") + c.Task.ID + "  " + c.Task.State + ", " + polls(c.Task.Polls)
		if c.Status == event.CallRunning || c.Status == event.CallHeld {
			line += s.Muted.Render("  (x x cancels it: the agent's next poll says cancelled)")
		}
		add(line)
	}
	if c.DecidedBy != "" {
		add(s.Muted.Render("decided by: ") + c.DecidedBy)
	}
	if c.Error != "" {
		add(s.Failed.Render("error: ") + oneLine(c.Error))
	}
	if c.CellFailed() {
		add(s.Failed.Render("the code raised "+c.CellError) + s.Muted.Render(" (the call answered; its outputs hold the traceback)"))
	}

	if c.Edited {
		section("arguments, as the person edited them before it ran")
	} else {
		section("arguments")
	}
	add(m.argLines(c, w)...) // args.go: code as code
	if c.ArgsCut > 0 {
		add(s.Muted.Render(fmt.Sprintf("  … %d bytes of arguments not kept", c.ArgsCut)))
	}

	if c.Status == event.CallRunning || c.Status == event.CallHeld {
		return wrapAll(out, w), len(out)
	}

	if c.Text != "" || c.TextCut > 0 {
		label := "text content"
		if c.IsError {
			label += " (isError)"
		}
		if c.Images > 0 {
			label += fmt.Sprintf(" + %d image(s)", c.Images)
		}
		section(label)
		add(boundText(c.Text, detailTextLines, w, s.Muted.Render)...)
		if c.TextCut > 0 {
			add(s.Muted.Render(fmt.Sprintf("  … %d bytes of text not kept", c.TextCut)))
		}
	}

	if meta := m.metaLines(c); len(meta) > 0 {
		section("_meta")
		add(meta...)
	}
	if c.CellID != "" {
		cell := "  " + c.CellID
		if c.Notebook != "" {
			cell += s.Muted.Render(" in " + c.Notebook)
		}
		section("acted-on cell")
		add(cell)
	}
	section("schema")
	switch {
	case c.SchemaOK == nil:
		add(s.Muted.Render("  not checked"))
	case *c.SchemaOK:
		add(s.OK.Render("  ✓ matches the output schema"))
	default:
		add(s.Failed.Render("  ✗ does not match: ") + oneLine(c.SchemaProblem))
	}

	section("structuredContent")
	out = wrapAll(out, w)
	treeStart := len(out)
	switch {
	case m.detail.parseErr != "":
		out = append(out, s.Error.Render("  "+m.detail.parseErr))
	case m.detail.root == nil:
		out = append(out, s.Muted.Render("  none"))
	default:
		for i, r := range m.detail.rows() {
			out = append(out, m.treeLine(r, i == m.detail.cursor && m.focus == FocusDetail))
		}
	}
	return out, treeStart
}

// treeLine draws one row of the structuredContent tree.
func (m *Model) treeLine(r treeRow, cursor bool) string {
	s := m.styles
	n := r.node
	mark := "  "
	if cursor {
		mark = "▸ "
	}
	pad := mark + strings.Repeat("  ", r.depth)
	label := ""
	if n.key != "" {
		label = s.JSONKey.Render(n.key) + ": "
	}
	switch n.kind {
	case '{', '[':
		fold := "▾ "
		if !m.detail.isOpen(n, r.depth) {
			fold = "▸ "
		}
		open, close := "{", "}"
		if n.kind == '[' {
			open, close = "[", "]"
		}
		summary := fmt.Sprintf("%s%d%s", open, len(n.children), close)
		if len(n.children) == 0 {
			fold = "  "
		}
		return pad + fold + label + s.Muted.Render(summary)
	case 's':
		return pad + "  " + label + s.JSONString.Render(oneLine(n.value))
	default:
		return pad + "  " + label + s.JSONNumber.Render(n.value)
	}
}

// metaLines lists _meta: cache hints with their TTL counting down from the
// end of the call, then every other key.
func (m *Model) metaLines(c *observe.Call) []string {
	s := m.styles
	if len(c.Meta) == 0 {
		return nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(c.Meta, &meta); err != nil {
		return []string{s.Error.Render("  _meta is not an object: ") + oneLine(string(c.Meta))}
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		var hint struct {
			TTLMs      *int64 `json:"ttlMs"`
			CacheScope string `json:"cacheScope"`
		}
		if json.Unmarshal(meta[k], &hint) == nil && hint.TTLMs != nil {
			ttl := time.Duration(*hint.TTLMs) * time.Millisecond
			left := c.Finished.Add(ttl).Sub(m.clock)
			state := s.OK.Render(fmt.Sprintf("fresh %ds left", int((left+time.Second-1)/time.Second)))
			if left <= 0 {
				state = s.Cancelled.Render("stale")
			}
			line := fmt.Sprintf("  %s ttl %gs", k, ttl.Seconds())
			if hint.CacheScope != "" {
				line += " " + hint.CacheScope
			}
			out = append(out, line+": "+state)
			continue
		}
		var str string
		v := oneLine(string(meta[k]))
		if json.Unmarshal(meta[k], &str) == nil {
			v = str
		}
		out = append(out, "  "+k+" "+s.Muted.Render(v))
	}
	return out
}

// view draws the visible window of the detail lines.
func (p *detailPane) view(m *Model, w, h int) []string {
	if m.held.mode == editArgs {
		lines := m.editorLines(w)
		if len(lines) > h {
			lines = lines[:h]
		}
		return lines
	}
	if c := m.selectedCall(); awaitsDecision(c) {
		return m.cardLines(c, w, h) // the card, in the detail pane (cardview.go)
	}
	lines, _ := m.detailLines(w)
	off := clamp(p.offset, 0, max(len(lines)-h, 0))
	lines = lines[off:]
	if len(lines) > h {
		lines = lines[:h]
	}
	return lines
}

// indent prefixes every line with two spaces.
func indent(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "  " + strings.ReplaceAll(l, "\t", "    ")
	}
	return lines
}

// boundText indents text, wraps it to w cells and keeps the first n screen
// lines, saying how many source lines were left out. It looks at no more of
// the text than n lines can show, so a 64 KiB single line costs no more to
// draw than a short one.
func boundText(text string, n, w int, muted func(...string) string) []string {
	src := indent(text)
	var out []string
	used, cut := 0, false
	for _, l := range src {
		if len(out) >= n {
			break
		}
		if limit := max(w, 1) * n; len(l) > limit {
			l, cut = l[:limit], true
		}
		out = append(out, wrapAll([]string{l}, w)...)
		used++
	}
	if len(out) > n {
		out, cut = out[:n], true
	}
	switch more := len(src) - used; {
	case more > 0:
		out = append(out, muted(fmt.Sprintf("  … %d more lines", more)))
	case cut:
		out = append(out, muted("  … (line cut)"))
	}
	return out
}

// wrapAll wraps long lines to w cells so nothing is cut silently.
func wrapAll(lines []string, w int) []string {
	if w <= 0 {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if ansi.StringWidth(l) <= w {
			out = append(out, l)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(l, w, ""), "\n")...)
	}
	return out
}
