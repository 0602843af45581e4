//lint:file-ignore ST1005 these errors are the reference's sentences, shown to the agent as they are

package mcp

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// The jupyter_cite prompt: like @ or # in an IDE, it puts chosen cells of a
// notebook into the prompt. Its text is the reference's, so prompts written
// against it read the same.

func (s *Server) addPrompt() {
	s.srv.AddPrompt(&sdk.Prompt{
		Name:        "jupyter_cite",
		Description: "Like @ or # in Coding IDE or CLI, cite specific cells from specified notebook and insert them into the prompt.",
		Arguments: []*sdk.PromptArgument{
			{Name: "prompt", Description: "User prompt for the cited cells", Required: true},
			{Name: "cell_indices", Description: "Cell indices to cite (0-based),supporting flexible range format, e.g., '0,1,2', '0-2' or '0-2,4'", Required: true},
			{Name: "notebook_name", Description: "Name of the notebook to cite cells from, default (empty) to current activated notebook"},
		},
	}, s.jupyterCite)
}

func (s *Server) jupyterCite(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	args := req.Params.Arguments
	nb, cells, err := s.e.ReadNotebook(ctx, s.sessionID(req.Session), args["notebook_name"], 0, 0)
	if err != nil {
		if engine.IsUserError(err) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: agentText("", err)}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reading the notebook failed: " + redact(err.Error())}
	}
	indices, err := parseCellIndices(args["cell_indices"], len(cells))
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return &sdk.GetPromptResult{
		Description: fmt.Sprintf("Cells %s of notebook %s", pyList(indices), nb.Name),
		Messages: []*sdk.PromptMessage{{
			Role:    "user",
			Content: &sdk.TextContent{Text: citeText(nb.Name, cells, indices, args["prompt"])},
		}},
	}, nil
}

// citeText is the reference's prompt text. Its cell headers are read_cell's
// (the reference's header, then the cell id), so that a cited cell can be
// found again by id.
func citeText(name string, cells []engine.CellInfo, indices []int, prompt string) string {
	lines := []string{fmt.Sprintf("USER Cite cells %s from notebook %s, here are the cells:", pyList(indices), name)}
	for _, i := range indices {
		c := cells[i]
		c.Index = i
		lines = append(lines, cellHeader(c), strings.TrimRight(c.Source, "\n"))
	}
	lines = append(lines, "=====End of Cited Cells=====", "USER's Instruction are follow: "+prompt)
	return strings.Join(lines, "\n")
}

// pyList renders indices the way Python prints a list ("[0, 1, 2]"), which
// is what the reference's prompt text shows.
func pyList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// parseCellIndices reads a cell selection: single indices and ranges
// separated by commas ("0,1,2", "0-2", "0-2,4"), and "3-" for 3 to the last
// cell. The answer is sorted without duplicates. Errors say what was wrong,
// with the reference's wording.
func parseCellIndices(spec string, cells int) ([]int, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("Cell indices cannot be empty")
	}
	if cells <= 0 {
		return nil, fmt.Errorf("Notebook has no cells")
	}
	outOfRange := func(i int) error {
		return fmt.Errorf("Cell index %d is out of range. Notebook has %d cells.", i, cells)
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		startText, endText, isRange := strings.Cut(part, "-")
		if !isRange {
			i, err := strconv.Atoi(part)
			if err != nil {
				return nil, fmt.Errorf("Invalid cell index: %s", part)
			}
			if i < 0 {
				return nil, fmt.Errorf("Cell index cannot be negative: %d", i)
			}
			if i >= cells {
				return nil, outOfRange(i)
			}
			seen[i] = true
			continue
		}
		startText, endText = strings.TrimSpace(startText), strings.TrimSpace(endText)
		if startText == "" {
			return nil, fmt.Errorf("Invalid range format: %s", part)
		}
		start, err := strconv.Atoi(startText)
		if err != nil {
			return nil, fmt.Errorf("Invalid start index: %s", startText)
		}
		if start < 0 {
			return nil, fmt.Errorf("Start index cannot be negative: %d", start)
		}
		end := cells - 1
		if endText == "" {
			if start >= cells {
				return nil, outOfRange(start)
			}
		} else {
			end, err = strconv.Atoi(endText)
			if err != nil {
				return nil, fmt.Errorf("Invalid end index: %s", endText)
			}
			if end < start {
				return nil, fmt.Errorf("End index (%d) must be greater than or equal to start index (%d)", end, start)
			}
		}
		if end >= cells {
			return nil, outOfRange(max(start, cells))
		}
		for i := start; i <= end; i++ {
			seen[i] = true
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out, nil
}
