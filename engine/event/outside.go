package event

import (
	"fmt"
	"strings"
	"time"
)

// CellChangeKind says how one cell differs after an outside edit.
type CellChangeKind string

// Cell changes.
const (
	CellAdded   CellChangeKind = "added"
	CellRemoved CellChangeKind = "removed"
	CellEdited  CellChangeKind = "edited"  // source, type, metadata or attachments
	CellOutputs CellChangeKind = "outputs" // outputs or execution count only
	CellMoved   CellChangeKind = "moved"   // same cell, another place among the others
)

// CellChange is one cell an outside edit changed, by id. Index is its
// position after the edit; for a removed cell, where it was.
type CellChange struct {
	ID     string         `json:"id"`
	Index  int            `json:"index"`
	Change CellChangeKind `json:"change"`
}

// maxListedChanges bounds the cells a notice lists; the rest are counted.
const MaxListedChanges = 12

// OutsideEditText is the one line that says what an outside edit changed,
// as an agent reads it in its next result and the workbench shows it:
// "notebook 'nb' (x.ipynb) was changed outside this server at 14:31:23 UTC:
// cell 3 (ab12cd34) edited, cell 5 (9f00aa11) added".
func OutsideEditText(name, path string, at time.Time, changes []CellChange, metadata bool) string {
	var parts []string
	for i, c := range changes {
		if i == MaxListedChanges {
			parts = append(parts, fmt.Sprintf("and %d more cells", len(changes)-i))
			break
		}
		what := string(c.Change)
		if c.Change == CellOutputs {
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
