// Package output is the one model of what a reader sees of a Jupyter output.
// The agent's tool results, the notebook resources, the workbench's panes
// and the event snapshots all build a View with Render and show its text;
// they differ only in colour (the agent's text has the escapes stripped, the
// workbench keeps SGR colours) and in layout. Kernel messages become
// notebook outputs here too (FromMessage), for the engine's executions and
// the sandboxes alike.
//
// It is its own package rather than part of engine/notebook because it is
// policy, not file format: notebook reads and writes nbformat faithfully
// (the stored text keeps its "\r"s), while this package decides what a
// reader is shown, and it speaks the kernel's wire format, which the file
// format has no business knowing.
package output

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// DefaultLimit is the bound on the text of one output when nothing else is
// configured (the --max-output default).
const DefaultLimit = 20000

// View is one output as a reader sees it. Text is what is shown for a text
// output, with its SGR colours (a traceback is coloured); for an image,
// Image holds the bytes and Text is empty. MimeType is the representation
// chosen from a mime bundle (empty for a stream or an error). Cut is set
// when Text is only the head of the whole text.
//
// The JSON form is what engine events carry to observers (the attach feed,
// recordings).
type View struct {
	Kind     string `json:"kind"` // stream, execute_result, display_data, error
	Name     string `json:"name,omitempty"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Image    []byte `json:"image,omitempty"`
	EName    string `json:"ename,omitempty"`
	EValue   string `json:"evalue,omitempty"`
	URI      string `json:"uri,omitempty"` // the resource serving the whole output, if any
	Cut      *Cut   `json:"cut,omitempty"`
	// Redraw, on a piece of a stream shown live (Live), says that Text
	// starts by redrawing the line the previous piece left unterminated:
	// that line is replaced, not continued.
	Redraw bool `json:"redraw,omitempty"`
}

// Cut tells that a text was cut, and where the whole is. Sizes count the
// text without escapes, as the agent reads it.
type Cut struct {
	Limit int    `json:"limit"`         // the bound, in bytes
	Size  int    `json:"size"`          // bytes of the whole text
	Left  int    `json:"left"`          // bytes not shown
	Lines int    `json:"lines"`         // lines not shown
	URI   string `json:"uri,omitempty"` // the resource serving the whole output
}

// Note is the line said after a cut text.
func (c *Cut) Note() string {
	where := "the output was not saved anywhere, so rerun the code printing less to see the rest"
	if c.URI != "" {
		where = "read the resource " + c.URI + " for the whole output"
	}
	return fmt.Sprintf("[... output cut: %d more bytes (%d lines) not shown; %s]", c.Left, c.Lines, where)
}

// Options shape a View: the bound on its text and where the whole output
// can be read.
type Options struct {
	Limit int    // bytes of text kept (0: no bound)
	URI   string // the resource of this output, "" when it is in no notebook
}

// URI is the resource that serves output index of a notebook's cell whole.
func URI(notebookName, cellID string, index int) string {
	if notebookName == "" || cellID == "" {
		return ""
	}
	return fmt.Sprintf("notebook://%s/cells/%s/outputs/%d", url.PathEscape(notebookName), url.PathEscape(cellID), index)
}

// String is the text an agent reads: Text without escapes, then the note
// when it was cut. An image has no text.
func (v View) String() string {
	t := ansi.Strip(v.Text)
	if v.Cut != nil {
		t += "\n" + v.Cut.Note()
	}
	return t
}

// Base64 is the image's bytes in base64 (as nbformat stores them, without
// the line breaks it allows).
func (v View) Base64() string {
	if len(v.Image) == 0 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(v.Image)
}

// ImageMIMEs are the image types shown as images, in order of preference.
var ImageMIMEs = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// Render turns one nbformat output into what a reader sees:
//
//   - a stream: its text after Terminal ("\r" and "\b" applied);
//   - an error: the traceback lines joined (with their colours), or
//     "ename: evalue" when there is no traceback;
//   - a mime bundle: the first representation in this order:
//     1. an image (ImageMIMEs: png, jpeg, gif, webp), as bytes;
//     2. text/plain, unless it is only a bare object repr
//     ("<IPython.core.display.Markdown object>"), which says nothing;
//     3. text/markdown, then text/latex;
//     4. application/json, indented;
//     5. text/plain even if a bare repr;
//     6. text/html, shown as "[HTML Output]" (markup is not text to read);
//     7. otherwise a line naming the keys there were.
//
// Text longer than o.Limit is cut (see Cut).
func Render(o *notebook.Output, opt Options) View {
	v := View{Kind: o.OutputType, Name: o.Name, URI: opt.URI}
	var text string
	switch o.OutputType {
	case notebook.Stream:
		text = Terminal(o.Text)
	case notebook.Error:
		v.EName, v.EValue = o.EName, o.EValue
		text = strings.Join(o.Traceback, "\n")
		if strings.TrimSpace(text) == "" {
			text = o.EName + ": " + o.EValue
		}
	case notebook.ExecuteResult, notebook.DisplayData:
		if m, ok := firstImage(o.Data); ok {
			v.MimeType = m
			b64 := strings.Join(strings.Fields(notebook.DataText(o.Data[m])), "")
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err == nil {
				v.Image = raw
				return v
			}
			v.Text = fmt.Sprintf("[Image Output (%s) - Error processing image]", m)
			return v
		}
		v.MimeType, text = richText(o)
	default:
		v.Text = fmt.Sprintf("[Unknown output type: %s]", o.OutputType)
		return v
	}
	v.Text, v.Cut = cut(text, opt)
	return v
}

func firstImage(data map[string]json.RawMessage) (string, bool) {
	for _, m := range ImageMIMEs {
		if _, ok := data[m]; ok {
			return m, true
		}
	}
	return "", false
}

// objectRepr matches the bare repr IPython puts in text/plain for display
// objects ("<IPython.core.display.Markdown object>"), which says nothing.
var objectRepr = regexp.MustCompile(`^<[\w.]+ object( at 0x[0-9a-fA-F]+)?>$`)

// richText picks the text representation of a bundle without images (see
// Render for the order) and says which it is.
func richText(o *notebook.Output) (string, string) {
	plain, hasPlain := o.Data["text/plain"]
	if hasPlain {
		if t := notebook.DataText(plain); !objectRepr.MatchString(strings.TrimSpace(t)) {
			return "text/plain", t
		}
	}
	for _, m := range []string{"text/markdown", "text/latex"} {
		if v, ok := o.Data[m]; ok {
			return m, notebook.DataText(v)
		}
	}
	if v, ok := o.Data["application/json"]; ok {
		var x any
		if json.Unmarshal(v, &x) == nil {
			if b, err := json.MarshalIndent(x, "", "  "); err == nil {
				return "application/json", string(b)
			}
		}
	}
	if hasPlain {
		return "text/plain", notebook.DataText(plain)
	}
	if _, ok := o.Data["text/html"]; ok {
		return "text/html", "[HTML Output]"
	}
	return "", fmt.Sprintf("[%s Data: keys=%v]", o.OutputType, sortedKeys(o.Data))
}

// MIMEs lists an output's representations, the one Render chooses first,
// then the others sorted: a stream or an error is text/plain.
func MIMEs(o *notebook.Output) []string {
	switch o.OutputType {
	case notebook.Stream, notebook.Error:
		return []string{"text/plain"}
	}
	var mimes []string
	if m, ok := firstImage(o.Data); ok {
		mimes = append(mimes, m)
	} else if m, _ := richText(o); m != "" {
		mimes = append(mimes, m)
	}
	for _, m := range sortedKeys(o.Data) {
		if len(mimes) == 0 || m != mimes[0] {
			mimes = append(mimes, m)
		}
	}
	if len(mimes) == 0 {
		mimes = []string{"text/plain"}
	}
	return mimes
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cut keeps the head of text when its escape-free form is longer than
// opt.Limit: the first Limit bytes of what a reader reads, ending on a line
// boundary when one is in the second half, never inside a UTF-8 sequence or
// an escape sequence. The returned text keeps its escapes (a colour reset
// ends it when it had any).
func cut(text string, opt Options) (string, *Cut) {
	if opt.Limit <= 0 || len(text) <= opt.Limit {
		return text, nil // escapes only add bytes: the plain text fits too
	}
	plain := ansi.Strip(text)
	if len(plain) <= opt.Limit {
		return text, nil
	}
	keep := opt.Limit
	for keep > 0 && !utf8.RuneStart(plain[keep]) {
		keep--
	}
	if nl := strings.LastIndexByte(plain[:keep], '\n'); nl >= keep/2 {
		keep = nl + 1
	}
	rest := plain[keep:]
	lines := strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		lines++
	}
	c := &Cut{Limit: opt.Limit, Size: len(plain), Left: len(rest), Lines: lines, URI: opt.URI}
	if len(plain) == len(text) {
		return text[:keep], c
	}
	kept := text[:escapedIndex(text, keep)]
	if strings.IndexByte(kept, 0x1b) >= 0 {
		kept += "\x1b[0m"
	}
	return kept, c
}

// Bound cuts v's text further, to limit bytes, by Render's rules: an
// observer with a tighter bound than the engine's keeps less but still says
// what the whole was and where it is.
func (v View) Bound(limit int) View {
	if limit <= 0 || len(v.Text) <= limit {
		return v
	}
	text, c := cut(v.Text, Options{Limit: limit, URI: v.URI})
	if c == nil {
		return v
	}
	if old := v.Cut; old != nil {
		// What was cut before follows what is cut now: a line cut in two
		// is one line.
		if c.Left > 0 && !strings.HasSuffix(v.Text, "\n") {
			c.Lines--
		}
		c.Size, c.Left, c.Lines = old.Size, c.Left+old.Left, c.Lines+old.Lines
	}
	v.Text, v.Cut = text, c
	return v
}
