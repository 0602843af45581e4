package observe

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/eventtest"
)

// The session is internal/eventtest's, the one ui's tests draw too, so that
// what the feed and the projection are tested on is what the screens are
// drawn from.

// t0 is the fixed clock of the fixtures.
var t0 = eventtest.T0

func raw(t testing.TB, v any) json.RawMessage { return eventtest.JSON(t, v) }

// scenario is the shared session of internal/eventtest: an agent opens a
// notebook, lists files (with a cache hint), edits and runs cells, one call
// fails, one runs, one is held for approval.
func scenario(t testing.TB) []event.Event { return eventtest.Scenario(t) }

// decodePNG is an image decoder for a State, as the workbench has one.
func decodePNG(_ string, data []byte) any {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return img
}

// toolsOf lists the tools of calls, for messages.
func toolsOf(cs []*Call) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Tool)
	}
	return out
}

// isImage reports whether decodePNG made an image of an output.
func isImage(decoded any) bool {
	_, ok := decoded.(image.Image)
	return ok
}
