package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// cardCode is the code of the held execute_code of cardScenario: long
// enough to scroll at 80x24, with a run of blank lines, an escape in a
// string and a lone carriage return, as an agent's code may hold them.
const cardCode = "import os\nimport pandas as pd\n\ndf = pd.read_csv('sales.csv')\n" +
	"# the quarter's total, printed in red\ntotal = df['q1'].sum()\nprint(\"\x1b[31mtotal:\", total)  # note\rprint('and then')\n" +
	"\n\n\n\n\n" +
	"def clean(path):\n    \"\"\"Remove the raw file once it is read.\"\"\"\n    if os.path.exists(path):\n        os.remove(path)\n\n" +
	"for name in ['sales.csv', 'sales.bak']:\n    clean(name)\nprint('done')\n"

// cardScenario is the scenario with an execute_code held behind its
// delete_cell: two calls queue for the person.
func cardScenario(t testing.TB) []event.Event {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	evs := scenario(t)
	args := raw(t, map[string]any{"code": cardCode, "timeout": 30})
	return append(evs,
		event.Event{Seq: 100, Time: at(27), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c7", Session: "sess-7f3a", Tool: "execute_code",
			Args: args, Status: event.CallRunning, Started: at(27)}},
		event.Event{Seq: 101, Time: at(27), Type: event.EvCallHeld, Call: &event.CallEvent{ID: "c7", Session: "sess-7f3a", Tool: "execute_code",
			Args: args, Status: event.CallHeld, Editable: true, Started: at(27), HeldUntil: at(147), Preview: &event.CallPreview{
				Client: "claude-code 1.0", What: "run code on kernel k-5e6f7a (notebook sales); not saved to the notebook", Code: cardCode, Language: "python"}}},
	)
}

// TestGoldenCard keeps the held-call card at both sizes: plain (the layout,
// readable in the file) and in colour on a light and a dark true-colour
// terminal. The card shows the second held call (H), so the queue shows.
func TestGoldenCard(t *testing.T) {
	for _, sz := range goldenSizes {
		for _, th := range []struct{ name, theme string }{{"", ""}, {"_dark", theme.DarkName}, {"_light", theme.LightName}} {
			t.Run(fmt.Sprintf("%dx%d%s", sz.w, sz.h, th.name), func(t *testing.T) {
				styles := asciiStyles()
				if th.theme != "" {
					styles = themedStyles(termenv.TrueColor, th.theme)
				}
				m := newStyledModel(t, newFakeBackend(), styles, sz.w, sz.h, cardScenario(t))
				m = keys(m, "H")
				if c := m.cardCall(); c == nil || c.ID != "c7" {
					t.Fatalf("the card shows %v, want c7", c)
				}
				frame := m.View()
				checkFrame(t, "card", frame, sz.w, sz.h)
				golden(t, fmt.Sprintf("card_%dx%d%s", sz.w, sz.h, th.name), frame)
				if th.theme == "" && ansi.Strip(frame) != frame {
					t.Error("the plain card holds escapes")
				}
			})
		}
	}
}
