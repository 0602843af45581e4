package mcp

import (
	"fmt"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// The prose of the answers. The wording follows the reference (Jupyter MCP
// Server v2.2.1) where it had one, because agents and their prompts were
// written against it; where our engine knows more (cell ids), it is added
// without moving what was there.

// textUseNotebook is use_notebook's answer. reactivated is the notebook the
// session had current when this call made a notebook already in use current
// again (the reference says so); also are the other names of the same file.
func textUseNotebook(nb engine.NotebookInfo, mode, reactivated string, also []string) string {
	var b strings.Builder
	if reactivated != "" {
		fmt.Fprintf(&b, "[INFO] Reactivating notebook '%s' and deactivating '%s'.\n", nb.Name, reactivated)
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, "[INFO] '%s' is also in use as %s: the names are one notebook (the same cells and the same kernel).\n", nb.Path, quotedList(also))
	}
	if nb.KernelID != "" {
		fmt.Fprintf(&b, "[INFO] Connected to kernel '%s'.\n", nb.KernelID)
	}
	if mode == "create" {
		fmt.Fprintf(&b, "[INFO] Created notebook '%s'.\n", nb.Path)
	}
	fmt.Fprintf(&b, "[INFO] Successfully activate notebook '%s'.\n", nb.Name)
	fmt.Fprintf(&b, "\nNotebook has %d cells. Use read_notebook with notebook_name '%s' to see them.", nb.Cells, nb.Name)
	return b.String()
}

// quotedList is 'a', 'b' and 'c'.
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// execCount is how the reference shows an execution count.
func execCount(n *int) string {
	if n == nil || *n == 0 {
		return "N/A"
	}
	return fmt.Sprint(*n)
}

// overview is the first line of a source and how many lines are hidden.
func overview(source string) string {
	lines := strings.Split(strings.TrimSuffix(source, "\n"), "\n")
	if len(lines) == 0 || source == "" {
		return ""
	}
	first := strings.TrimRight(lines[0], "\r")
	if len(lines) > 1 {
		first += fmt.Sprintf("...(%d lines hidden)", len(lines)-1)
	}
	return first
}

// briefTable is read_notebook's brief format: the reference's columns, with
// the cell id added last so that the reference's columns keep their places.
func briefTable(cells []engine.CellInfo) table {
	t := table{columns: []string{"Index", "Type", "Count", "First Line", "ID"}}
	for _, c := range cells {
		t.rows = append(t.rows, []string{fmt.Sprint(c.Index), c.Type, execCount(c.ExecutionCount), overview(c.Source), c.ID})
	}
	return t
}

// cellHeader is the reference's line above a cell's source, with the id
// added after what the reference has: its clients split the header on
// "type: " and " |" and read the count after "execution count:", so
// nothing of ours may come before those.
func cellHeader(c engine.CellInfo) string {
	return fmt.Sprintf("=====Cell %d | type: %s | execution count: %s | id: %s=====", c.Index, c.Type, execCount(c.ExecutionCount), c.ID)
}

func textReadNotebook(nb engine.NotebookInfo, cells []engine.CellInfo, format string, start int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Notebook %s has %d cells.\n\n", nb.Name, nb.Cells)
	switch {
	case nb.Cells == 0:
		b.WriteString("Notebook is empty")
	case len(cells) == 0:
		fmt.Fprintf(&b, "No cells in the specified range (start_index %d).", start)
	case format == "detailed":
		for _, c := range cells {
			b.WriteString(cellHeader(c))
			b.WriteString("\n")
			b.WriteString(c.Source)
			b.WriteString("\n\n")
		}
	default:
		b.WriteString(briefTable(cells).tsv())
	}
	return strings.TrimRight(b.String(), "\n")
}

func textDiff(verb string, index int, diff string) string {
	if strings.TrimSpace(diff) == "" {
		return fmt.Sprintf("Cell %d %s successfully - no changes detected", index, verb)
	}
	return fmt.Sprintf("Cell %d %s successfully!\n\n```diff\n%s\n```", index, verb, strings.TrimRight(diff, "\n"))
}

func textDeleted(cells []engine.CellInfo, includeSource bool) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString("\n")
		}
		// The reference's lines, with the id after them.
		fmt.Fprintf(&b, "Cell %d (%s) deleted successfully (its id was %s).", c.Index, c.Type, c.ID)
		if includeSource {
			fmt.Fprintf(&b, "\ndeleted cell source:\n%s", strings.TrimRight(c.Source, "\n"))
		}
	}
	return b.String()
}
