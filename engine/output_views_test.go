package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// testOutputViews runs a progress bar and a coloured traceback on a real
// kernel and checks what the engine tells observers: the live pieces carry
// no "\r" and add up to the stream's last state, and the cell snapshots are
// the output model's views of the outputs as saved (which keep the "\r"s:
// the file is what the kernel sent).
func testOutputViews(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	sub := f.e.Bus().Subscribe(1 << 14)
	defer sub.Close()
	f.use(t, "s", "nb", "views.ipynb", "create")
	code := "import time\nfor i in range(0, 101, 50):\n    print(f'\\r{i:3d}%', end='', flush=True)\n    time.sleep(0.2)\nprint(' done')\ndef f():\n    return 1/0\nf()"
	res, err := f.e.InsertExecuteCell(ctx, "s", "", -1, code, ExecOptions{Timeout: 60 * time.Second})
	checkNoError(t, "execute", err)
	if got := describe(res.Outputs); len(got) != 2 || got[1] != "error:ZeroDivisionError" {
		t.Fatalf("outputs %q", got)
	}

	var live []event.OutputSnapshot
	var last *event.NotebookEvent
	for finished := false; !finished; {
		select {
		case ev := <-sub.C():
			switch {
			case ev.Type == event.EvExecOutput && ev.Exec.ID == res.ExecID:
				live = append(live, *ev.Exec.Output)
			case ev.Type == event.EvNotebookChanged && ev.Notebook.Op == event.OpOutput:
				last = ev.Notebook
			case ev.Type == event.EvExecFinished && ev.Exec.ID == res.ExecID:
				finished = true
			}
		case <-ctx.Done():
			t.Fatal("no exec.finished event")
		}
	}

	// Live: the pieces, their open line replaced on Redraw, read as the
	// whole stream does.
	var shown, open string
	pieces := 0
	for _, v := range live {
		if v.Kind != notebook.Stream {
			continue
		}
		pieces++
		if strings.ContainsAny(v.Text, "\r\b") {
			t.Errorf("a live piece carries a control: %q", v.Text)
		}
		if v.Redraw {
			open = ""
		}
		text := open + v.Text
		i := strings.LastIndexByte(text, '\n')
		shown, open = shown+text[:i+1], text[i+1:]
	}
	if shown+open != "100% done\n" || pieces < 2 {
		t.Errorf("live pieces (%d) show %q, want the progress bar's last state", pieces, shown+open)
	}

	// Snapshots: the model's views of what was saved.
	saved := f.disk(t, "views.ipynb").Cells[0]
	if !strings.Contains(saved.Outputs[0].Text, "\r") {
		t.Errorf("the saved stream lost its carriage returns: %q", saved.Outputs[0].Text)
	}
	if last == nil || len(last.Cells) != 1 || len(last.Cells[0].Outputs) != 2 {
		t.Fatalf("last output event: %+v", last)
	}
	for i, got := range last.Cells[0].Outputs {
		want := output.Render(&saved.Outputs[i], output.Options{Limit: f.e.MaxOutputBytes(), URI: output.URI("nb", saved.ID, i)})
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("snapshot of output %d\n%s\nis not the model's view of the saved output\n%s", i, g, w)
		}
	}
	if tb := last.Cells[0].Outputs[1]; !strings.Contains(tb.Text, "\x1b[") || tb.EName != "ZeroDivisionError" {
		t.Errorf("the traceback view lost its colours or its name: %+v", tb)
	}
}
