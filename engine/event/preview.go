package event

// Preview roles of the cells shown.
const (
	PreviewCellNew     = "new"     // the cell the call would insert
	PreviewCellGone    = "delete"  // a cell the call would delete
	PreviewCellMoved   = "move"    // the cell the call would move
	PreviewCellRun     = "run"     // the cell the call would run
	PreviewCellContext = "context" // a neighbour, for orientation
)

// CallPreview is what a held call would do. Strings are bounded (what it
// would run or write whole up to a MiB, sentences and neighbours to 16 KiB). Problem
// is set, and the rest mostly empty, when the call would be refused
// (Refused: an index out of range, no notebook; in the words the call
// then fails with) or when no preview could be made.
type CallPreview struct {
	Client   string        `json:"client,omitempty"`   // the session's client (name and version)
	Notebook string        `json:"notebook,omitempty"` // the notebook it acts on
	Path     string        `json:"path,omitempty"`     // that notebook's file
	What     string        `json:"what,omitempty"`     // one line: what it does
	Diff     string        `json:"diff,omitempty"`     // unified diff of a cell's source
	Code     string        `json:"code,omitempty"`     // the code that would run
	Language string        `json:"language,omitempty"` // of Code, as the kernel names it
	Cells    []PreviewCell `json:"cells,omitempty"`    // cells inserted, deleted, moved, run, and neighbours
	Facts    []string      `json:"facts,omitempty"`    // state that would be lost
	Problem  string        `json:"problem,omitempty"`  // why no (full) preview
	// Refused: Problem is the call's own refusal, in the words it will
	// fail with if it is allowed (an index out of range, a cell named
	// twice), not a preview that could not be made.
	Refused bool `json:"refused,omitempty"`
	// CodeCut and DiffCut are the bytes of Code and Diff not carried
	// (past the engine's bound on code): a card that shows them says so,
	// and never passes a cut for the end of the code.
	CodeCut int `json:"codeCut,omitempty"`
	DiffCut int `json:"diffCut,omitempty"`

	// Changed, on a call held again, says what changed since the person
	// was last shown it (the source of a cell, where the code runs).
	Changed string `json:"changed,omitempty"`
	// Bound are the facts of this preview that decide what the call does
	// (the notebook, where its code runs, its cells and their sources, in
	// full): allowed, it runs only while each one still holds, else it is
	// held again. They stay in this process.
	Bound []BoundFact `json:"-"`
}

// BoundFact is one fact a held call was shown that decides what it does:
// What names it for the person ("where the code runs"), Value is it.
type BoundFact struct {
	What  string
	Value string
}

// PreviewCell is a cell shown in a preview: Index is its position now (for
// a new cell, the one it would take).
type PreviewCell struct {
	Index  int    `json:"index"`
	ID     string `json:"id,omitempty"`
	Type   string `json:"type"`
	Source string `json:"source"`
	Role   string `json:"role"`
	// SourceCut is the bytes of Source not carried.
	SourceCut int `json:"sourceCut,omitempty"`
}
