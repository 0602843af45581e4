package output

import (
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Live turns the outputs of one run, as they arrive, into views for the
// observers that show a run live (the workbench's executions pane). A stream
// arrives in pieces and a "\r" at the end of one acts on the next, so the
// pieces of a stream go through one Screen: each view holds the lines the
// piece completed and the line it left unterminated, "\r" and "\b" applied,
// with Redraw set when its first line restates (redrawn) the line the
// previous view left unterminated. No view carries a carriage return, so an
// observer never sees one and never has to keep a terminal of its own.
type Live struct {
	name   string // the stream being written, "" after any other output
	screen Screen
	open   bool // the screen holds an unterminated line
}

// Reset starts over, as after clear_output.
func (l *Live) Reset() { *l = Live{} }

// View returns the view of o as it arrived (a whole output, or a piece of a
// stream).
func (l *Live) View(o *notebook.Output, opt Options) View {
	if o.OutputType != notebook.Stream {
		l.Reset()
		return Render(o, opt)
	}
	if o.Name != l.name {
		// Another stream is another output: its text starts a new line.
		l.Reset()
		l.name = o.Name
	}
	l.screen.Max = opt.Limit
	v := View{Kind: notebook.Stream, Name: o.Name, URI: opt.URI, Redraw: l.open}
	var b strings.Builder
	l.screen.Write(o.Text, func(line string) {
		b.WriteString(line)
		b.WriteByte('\n')
	})
	line := l.screen.Line()
	b.WriteString(line)
	// A "\r" or "\b" may have left the cursor inside an empty-looking line;
	// only what is shown matters to the next view.
	l.open = line != ""
	v.Text, v.Cut = cut(b.String(), opt)
	return v
}
