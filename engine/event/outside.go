package event

import (
	"fmt"
	"strings"
	"time"
)

// HowChanged says how one cell differs after an outside edit.
type HowChanged string

// Cell changes.
const (
	CellAdded   HowChanged = "added"
	CellRemoved HowChanged = "removed"
	CellEdited  HowChanged = "edited"  // source, type, metadata or attachments
	CellOutputs HowChanged = "outputs" // outputs or execution count only
	CellMoved   HowChanged = "moved"   // same cell, another place among the others
)

// ChangedCell is one cell an outside edit changed, by id. Index is its
// position after the edit; for a removed cell, where it was.
type ChangedCell struct {
	ID    string     `json:"id"`
	Index int        `json:"index"`
	How   HowChanged `json:"change"`
}

// maxListedChanges bounds the cells a notice lists; the rest are counted.
const MaxListedChanges = 12

// OutsideEditText is the one line that says what an outside edit changed,
// as an agent reads it in its next result and the workbench shows it:
// "notebook 'nb' (x.ipynb) was changed outside this server at 14:31:23 UTC:
// cell 3 (ab12cd34) edited, cell 5 (9f00aa11) added".
func OutsideEditText(name, path string, at time.Time, changes []ChangedCell, metadata bool) string {
	var parts []string
	for i, c := range changes {
		if i == MaxListedChanges {
			parts = append(parts, fmt.Sprintf("and %d more cells", len(changes)-i))
			break
		}
		what := string(c.How)
		if c.How == CellOutputs {
			what = "outputs changed"
		}
		parts = append(parts, fmt.Sprintf("cell %d (%s) %s", c.Index, c.ID, what))
	}
	if metadata {
		parts = append(parts, "notebook metadata changed")
	}
	return fmt.Sprintf("notebook '%s' (%s) was changed outside this server at %s: %s; cells read before then may be out of date",
		name, path, at.UTC().Format("15:04:05 UTC"), strings.Join(parts, ", "))
}
