package mcp

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolDef is one row of the tool table: what the agent sees (name,
// description, annotations, input and output schemas) and what the server
// needs to answer (kind, shape, cache hint, handler).
type toolDef struct {
	name        string
	title       string
	icon        string // its group's SVG (icons.go), shown by GUI hosts
	description string
	kind        string // structuredContent kind
	shape       shape

	// Annotations, all set explicitly (the protocol's defaults for missing
	// hints are not what a reader of the table would guess).
	readOnly    bool
	destructive bool
	idempotent  bool
	openWorld   bool

	cacheTTL int // ms; 0 = no cache hint (only the three listings have one)

	// runsCode marks a tool that runs code in a kernel or a sandbox, and
	// placesCode one that decides where code runs later (a sandbox, another
	// server): the calls --approve execute holds.
	runsCode, placesCode bool
	// preview, when set, is what a held call would do, in the engine's
	// terms, from its arguments (held_calls.go).
	preview func(args json.RawMessage) engine.PreviewRequest

	input  *jsonschema.Schema
	output *jsonschema.Schema

	// register adds the tool to a server; it closes over the typed handler.
	register func(s *Server, d *toolDef)
}

// sdkTool is the definition as listed in tools/list. The title is given
// both at the top (where GUI hosts read it since MCP 2025-06-18) and in the
// annotations (where older hosts look), with the tool's icon.
func (d *toolDef) sdkTool() *sdk.Tool {
	destructive, openWorld := d.destructive, d.openWorld
	return &sdk.Tool{
		Name:         d.name,
		Title:        d.title,
		Icons:        svgIcon(d.icon),
		Description:  d.description,
		InputSchema:  d.input,
		OutputSchema: d.output,
		Annotations: &sdk.ToolAnnotations{
			Title:           d.title,
			ReadOnlyHint:    d.readOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  d.idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

// handlerFor is a tool handler: unpack the typed input, call one engine
// method, wrap the answer with a shape constructor from results.go.
type handlerFor[In any] func(s *Server, ctx context.Context, c *call, in In) (*answer, error)

// newTool completes a table row with its schemas, typed handler and, for a
// tool whose held calls show what they would do, its preview (nil: none).
func newTool[In any](d toolDef, patch func(p patcher), h handlerFor[In], preview func(In) engine.PreviewRequest) *toolDef {
	d.input = inputSchema[In](patch)
	if preview != nil {
		d.preview = previewOf(preview)
	}
	d.output = outputSchema(d.shape)
	d.register = func(s *Server, d *toolDef) {
		sdk.AddTool(s.srv, d.sdkTool(), typed(s, d, h))
	}
	return &d
}

// Annotation sets as the reference lists them.
func readOnlyIdempotent(d toolDef) toolDef {
	d.readOnly, d.destructive, d.idempotent, d.openWorld = true, false, true, false
	return d
}

func destructiveOnly(d toolDef) toolDef {
	d.readOnly, d.destructive, d.idempotent, d.openWorld = false, true, false, false
	return d
}

func destructiveIdempotent(d toolDef) toolDef {
	d.readOnly, d.destructive, d.idempotent, d.openWorld = false, true, true, false
	return d
}

func destructiveOpenWorld(d toolDef) toolDef {
	d.readOnly, d.destructive, d.idempotent, d.openWorld = false, true, false, true
	return d
}

// Argument descriptions shared by several tools (the reference's text).
const (
	notebookNameDesc = "Target this specific connected notebook instead of the currently activated one. Use when multiple clients share this server, to avoid racing the shared 'current notebook' pointer. Omit to use the currently activated notebook."
	cellIDDesc       = "Address the cell by its notebook cell id instead of its index. An index is a position, and a position stops being true the moment anyone inserts a cell above it; an id does not. Every result says which id it acted on, so read a cell once and address it by id afterwards. Given both, the id wins."
)

// allTools is the table of every tool, sorted by name (the reference lists
// them by name so that the order never moves for a client that caches it).
// Each call builds fresh schemas.
func allTools() []*toolDef {
	tools := []*toolDef{
		// Notebooks (notebooks.go).
		newTool(destructiveIdempotent(toolDef{
			name: "use_notebook", title: "Use Notebook", icon: iconNotebook, kind: "notebook.use", shape: shapeMessage,
			description: "Use a notebook and activate it for following cell operations.\n" +
				"All cell operations will be performed on the currently activated notebook.\n" +
				"Activate new notebook will deactivate the previously activated notebook.\n" +
				"Reactivate previously activated notebook using same notebook_name and notebook_path.",
		}), patchUseNotebook, (*Server).useNotebook, nil),
		newTool(destructiveIdempotent(toolDef{
			name: "unuse_notebook", title: "Unuse Notebook", icon: iconNotebook, kind: "notebook.unuse", shape: shapeMessage,
			description: "Unuse from a specific notebook and release its resources.",
		}), nil, (*Server).unuseNotebook, previewUnuse),
		newTool(readOnlyIdempotent(toolDef{
			name: "list_notebooks", title: "List Notebooks", icon: iconNotebook, kind: "notebooks.list", shape: shapeRows, cacheTTL: 30000,
			description: "List all notebooks that have been used via use_notebook tool",
		}), nil, (*Server).listNotebooks, nil),
		newTool(readOnlyIdempotent(toolDef{
			name: "read_notebook", title: "Read Notebook", icon: iconNotebook, kind: "notebook.read", shape: shapeMessage,
			description: "Read a notebook and return index, source content, type, execution count of each cell.\n\n" +
				"Using brief format to get a quick overview of the notebook structure and it's useful for locating specific cells for operations like delete or insert.\n" +
				"Using detailed format to get detailed information of the notebook and it's useful for debugging and analysis.\n\n" +
				"It is recommended to use brief format with larger limit to get a overview of the notebook structure,\n" +
				"then use detailed format with exact index and limit to get the detailed information of some specific cells.",
		}), patchReadNotebook, (*Server).readNotebook, nil),
		newTool(destructiveOnly(toolDef{
			name: "restart_notebook", title: "Restart Notebook", icon: iconNotebook, kind: "notebook.restart", shape: shapeMessage,
			description: "Restart the kernel for a specific notebook.",
		}), nil, (*Server).restartNotebook, previewRestart),

		// Cells (cells.go).
		newTool(readOnlyIdempotent(toolDef{
			name: "read_cell", title: "Read Cell", icon: iconCell, kind: "cell.read", shape: shapeOutputs,
			description: "Read a cell as readable text entries.\n\n" +
				"Includes metadata and source, plus optional formatted output text rather\n" +
				"than raw nbformat objects.",
		}), patchReadCell, (*Server).readCell, nil),
		newTool(destructiveOnly(toolDef{
			name: "insert_cell", title: "Insert Cell", icon: iconCell, kind: "cell.insert", shape: shapeMessage,
			description: "Insert a cell to specified position from the currently activated notebook.",
		}), patchInsertCell, (*Server).insertCell, previewInsertCell),
		newTool(destructiveIdempotent(toolDef{
			name: "overwrite_cell_source", title: "Overwrite Cell Source", icon: iconCell, kind: "cell.overwrite", shape: shapeMessage,
			description: "Replace the entire source of a cell in the currently activated notebook.\n" +
				"Returns a diff showing the changes made.\n\n" +
				"Use this when rewriting a cell completely. For small, targeted changes,\n" +
				"prefer edit_cell_source instead — it is safer for partial edits.",
		}), patchOverwriteCell, (*Server).overwriteCellSource, previewOverwriteCell),
		newTool(destructiveOnly(toolDef{
			name: "edit_cell_source", title: "Edit Cell Source", icon: iconCell, kind: "cell.edit", shape: shapeMessage,
			description: "Perform a surgical find-and-replace within a cell's source (like an editor's Edit tool).\n" +
				"Finds `old_string` in the cell and replaces it with `new_string`. Matching is literal\n" +
				"(not regex) and may span multiple lines. By default, `old_string` must appear exactly once;\n" +
				"set `replace_all=True` for multiple occurrences. Returns a diff of the changes made.\n\n" +
				"Prefer this over overwrite_cell_source for small, targeted edits — it is safer because\n" +
				"unchanged parts of the cell are left untouched. Use read_cell first to see the current\n" +
				"source and construct an accurate old_string.",
		}), patchEditCell, (*Server).editCellSource, previewEditCell),
		newTool(destructiveOnly(toolDef{
			name: "delete_cell", title: "Delete Cell", icon: iconCell, kind: "cell.delete", shape: shapeMessage,
			description: "Delete specific cells from the currently activated notebook and return the cell source of deleted cells (if include_source=True).",
		}), patchDeleteCell, (*Server).deleteCell, previewDeleteCell),
		newTool(destructiveOnly(toolDef{
			name: "move_cell", title: "Move Cell", icon: iconCell, kind: "cell.move", shape: shapeMessage,
			description: "Move a cell from source_index to target_index within the currently activated notebook.\n\n" +
				"The cell is removed from source_index and placed at target_index. Cells in between shift\n" +
				"to fill the gap. The cell's type, source, and outputs are preserved.\n" +
				"Example: in a notebook [A, B, C, D], move_cell(1, 3) produces [A, C, D, B].\n\n" +
				"Use this tool instead of manually deleting and re-inserting a cell — it is atomic and\n" +
				"preserves cell metadata. Use read_notebook first to see cell indices if needed.",
		}), patchMoveCell, (*Server).moveCell, previewMoveCell),
		newTool(destructiveIdempotent(toolDef{
			name: "clear_cell_output", title: "Clear Cell Output", icon: iconCell, kind: "cell.clear_output", shape: shapeMessage,
			description: "Clear the outputs and execution count of a single code cell in the currently\n" +
				"activated notebook, without deleting the cell itself.",
		}), patchClearCell, (*Server).clearCellOutput, nil),

		// Executions (execute.go).
		newTool(destructiveOpenWorld(toolDef{
			name: "execute_cell", runsCode: true, title: "Execute Cell", icon: iconExecute, kind: "cell.execute", shape: shapeOutputs,
			description: "Execute a cell from the currently activated notebook with timeout and return it's outputs",
		}), patchExecuteCell, (*Server).executeCell, previewExecuteCell),
		newTool(destructiveOpenWorld(toolDef{
			name: "insert_execute_code_cell", runsCode: true, title: "Insert and Execute Code Cell", icon: iconExecute, kind: "cell.insert_execute", shape: shapeOutputs,
			description: "Insert a cell at specified index from the currently activated notebook and then execute it with timeout and return it's outputs\n" +
				"It is a shortcut tool for insert_cell and execute_cell tools, recommended to use if you want to insert a cell and execute it at the same time",
		}), patchInsertExecute, (*Server).insertExecuteCodeCell, previewInsertExecute),
		newTool(destructiveOpenWorld(toolDef{
			name: "execute_code", runsCode: true, title: "Execute Code", icon: iconExecute, kind: "code.execute", shape: shapeOutputs,
			description: "Execute code directly in a kernel (not saved to notebook).\n\n" +
				"If `use_sandbox` selected an active sandbox, this tool executes on that\n" +
				"sandbox instead of a Jupyter kernel. This allows agents to switch between\n" +
				"kernel-backed and sandbox-backed execution using the same execute_code API.\n\n" +
				"Targets the current activated notebook's kernel by default. Pass kernel_id\n" +
				"to execute in a specific kernel directly — including raw kernels with no\n" +
				"notebook attached.\n\n" +
				"Recommended to use in following cases:\n" +
				"1. Execute Jupyter magic commands(e.g., `%timeit`, `%pip install xxx`)\n" +
				"2. Performance profiling and debugging.\n" +
				"3. View intermediate variable values(e.g., `print(xxx)`, `df.head()`)\n" +
				"4. Temporary calculations and quick tests(e.g., `np.mean(df['xxx'])`)\n" +
				"5. Execute Shell commands in Jupyter server(e.g., `!git xxx`)\n\n" +
				"Under no circumstances should you use this tool to:\n" +
				"1. Import new modules or perform variable assignments that affect subsequent Notebook execution\n" +
				"2. Execute dangerous code that may harm the Jupyter server or the user's data without permission",
		}), patchExecuteCode, (*Server).executeCode, previewExecuteCode),

		// Server (files.go).
		newTool(readOnlyIdempotent(toolDef{
			name: "list_files", title: "List Files", icon: iconServer, kind: "files.list", shape: shapeRows, cacheTTL: 30000,
			description: "List all files and directories recursively in the Jupyter server's file system.\n" +
				"Used to explore the file system structure of the Jupyter server or to find specific files or directories.",
		}), patchListFiles, (*Server).listFiles, nil),
		newTool(readOnlyIdempotent(toolDef{
			name: "list_kernels", title: "List Kernels", icon: iconServer, kind: "kernels.list", shape: shapeRows, cacheTTL: 10000,
			description: "List all available kernels in the Jupyter server.\n\n" +
				"This tool shows all running and available kernel sessions on the Jupyter server,\n" +
				"including their IDs, names, states, connection information, and kernel specifications.\n" +
				"Useful for monitoring kernel resources and identifying specific kernels for connection.",
		}), nil, (*Server).listKernels, nil),
		newTool(destructiveIdempotent(toolDef{
			name: "connect_to_jupyter", placesCode: true, title: "Connect to Jupyter Server", icon: iconServer, kind: "jupyter.connect", shape: shapeMessage,
			description: "Connect to a Jupyter server dynamically with URL and token.\n\n" +
				"This tool allows you to connect to different Jupyter servers without needing to\n" +
				"restart the MCP server or modify configuration files. Particularly useful when:\n" +
				"- Working with multiple Jupyter servers with different ports/tokens\n" +
				"- Jupyter server token changes dynamically\n" +
				"- Need to switch between different Jupyter instances\n\n" +
				"Example usage:\n" +
				"- \"Connect to http://localhost:8888 with token abc123\"\n" +
				"- \"Connect to http://localhost:8889 without authentication\"",
		}), patchConnect, (*Server).connectToJupyter, previewConnect),

		// Sandboxes (sandboxes.go).
		newTool(destructiveOpenWorld(toolDef{
			name: "launch_sandbox", placesCode: true, title: "Launch Sandbox", icon: iconSandbox, kind: "sandbox.launch", shape: shapeObject,
			description: "Launch a code sandbox that can be used instead of Jupyter kernels.\n\n" +
				"After launch, call use_sandbox to make execute_code run on this sandbox (as an\n" +
				"alternative to notebook-bound kernel execution). Works in both MCP_SERVER and\n" +
				"JUPYTER_SERVER modes.",
		}), patchLaunchSandbox, (*Server).launchSandbox, previewLaunchSandbox),
		newTool(destructiveIdempotent(toolDef{
			name: "use_sandbox", placesCode: true, title: "Use Sandbox", icon: iconSandbox, kind: "sandbox.use", shape: shapeMessage,
			description: "Select which launched sandbox execute_code should use instead of kernels.",
		}), patchUseSandbox, (*Server).useSandbox, previewUseSandbox),
		newTool(readOnlyIdempotent(toolDef{
			name: "list_sandboxes", title: "List Sandboxes", icon: iconSandbox, kind: "sandboxes.list", shape: shapeList,
			description: "List launched code sandboxes that can be used as alternatives to kernels.",
		}), nil, (*Server).listSandboxes, nil),
		newTool(destructiveIdempotent(toolDef{
			name: "terminate_sandbox", title: "Terminate Sandbox", icon: iconSandbox, kind: "sandbox.terminate", shape: shapeMessage,
			description: "Terminate a launched code sandbox.",
		}), nil, (*Server).terminateSandbox, nil),
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].name < tools[j].name })
	return tools
}
