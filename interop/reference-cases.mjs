// The cases of the reference's test suite (datalayer/jupyter-mcp-server,
// tests/), each named as the reference names it (file::test[param]), with the
// same calls, arguments and assertions, written here against the reference's
// client (refclient.mjs). Cases ported from the reference's unit tests (which
// call a tool's internals) make the same checks through MCP: the tool is
// called, and what it did is read back the way a client reads it (read_cell,
// or the notebook file on the Jupyter server). reference-port.txt lists what
// is left out and what is expected to differ.
//
// A case is { id, fn(ctx, assert), transports?, flags?, fixture?, group?,
// groupSetup? }: transports limits where it runs, flags are extra server flags,
// fixture "none" skips opening notebook.ipynb as "default" first, and cases of
// one group share one server (groupSetup runs once, on its first case).

import { randomBytes } from "node:crypto";
import { pyStr, structured, extractText } from "./refclient.mjs";

const cellID = () => randomBytes(4).toString("hex");
const src = (s) => {
  const lines = s.split("\n");
  return lines.map((l, i) => (i < lines.length - 1 ? l + "\n" : l)).filter((l) => l !== "");
};
const md = (s) => ({ cell_type: "markdown", id: cellID(), metadata: {}, source: src(s) });
const code = (s, count = null, outputs = []) => ({ cell_type: "code", id: cellID(), metadata: {}, source: src(s), execution_count: count, outputs });
const nb = (cells) => ({ cells, metadata: { kernelspec: { name: "python3", display_name: "Python 3", language: "python" } }, nbformat: 4, nbformat_minor: 5 });

// The reference's dev/content notebooks, as its tests need them: notebook.ipynb
// (the default document) opens with a "# Matplotlib Examples" markdown cell and
// has more than five cells; new.ipynb opens with "# A New Notebook".
export const FIXTURE_NOTEBOOKS = {
  "notebook.ipynb": nb([
    md("# Matplotlib Examples\n\nThe notebook the ported reference tests work in."),
    code("1 + 1", 1, [{ output_type: "execute_result", execution_count: 1, data: { "text/plain": "2" }, metadata: {} }]),
    code("placeholder"),
    code("print(42)", 2, [{ output_type: "stream", name: "stdout", text: "42\n" }]),
    code("cell_B"),
    md("End of the fixture."),
  ]),
  "new.ipynb": nb([md("# A New Notebook"), code('print("Hello, World!")'), md("More to come.")]),
  "unit.ipynb": nb([]),
};

export const CASES = [];
const test = (id, fn, o = {}) => CASES.push({ id, fn, ...o });

// pyIn is Python's `needle in hay` for a decoded value.
const pyIn = (needle, hay) => {
  if (typeof hay === "string") return hay.includes(needle);
  if (Array.isArray(hay)) return hay.some((x) => x === needle);
  if (hay && typeof hay === "object") return needle in hay;
  throw new Error(`argument of type ${hay === null ? "NoneType" : typeof hay} is not iterable`);
};
const lower = (v) => {
  if (typeof v !== "string") throw new Error(`'${Array.isArray(v) ? "list" : typeof v}' object has no attribute 'lower'`);
  return v.toLowerCase();
};
const joined = (list, sep = " ") => list.map(pyStr).join(sep);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// tests/test_tools.py
// ---------------------------------------------------------------------------

const JUPYTER_TOOLS = [
  "use_notebook", "list_notebooks", "restart_notebook", "unuse_notebook", "read_notebook",
  "insert_cell", "insert_execute_code_cell", "overwrite_cell_source", "edit_cell_source", "execute_cell",
  "read_cell", "delete_cell", "clear_cell_output", "move_cell", "execute_code",
  "list_files", "list_kernels", "launch_sandbox", "list_sandboxes", "terminate_sandbox", "use_sandbox", "connect_to_jupyter",
];

test("test_tools.py::test_mcp_tool_list[mcp_server]", async ({ c }, assert) => {
  const tools = await c.listTools();
  const names = tools.tools.map((t) => t.name);
  assert(names.length === JUPYTER_TOOLS.length && JSON.stringify([...names].sort()) === JSON.stringify([...JUPYTER_TOOLS].sort()), `tools: ${names}`);
}, { fixture: "none" });

test("test_tools.py::test_mcp_client_connects_with_token[mcp_server]", async ({ c }, assert) => {
  const tools = await c.listTools();
  assert(tools.tools.length > 0);
}, { fixture: "none", transports: ["http"] });

// postInit is the reference's _post_mcp_init: an initialize with empty params.
async function postInit(url, token) {
  const headers = { Accept: "application/json, text/event-stream", "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }) });
  await r.text();
  return r;
}

test("test_tools.py::test_mcp_client_rejected_without_token[mcp_server]", async ({ server }, assert) => {
  const r = await postInit(server.url);
  assert(r.status === 403 || r.status === 401, `Server accepted unauthenticated request (status ${r.status})`);
}, { fixture: "none", transports: ["http"] });

const MCP_TOKEN = "MY_MCP_TOKEN";

test("test_tools.py::test_mcp_token_accepted", async ({ server }, assert) => {
  const r = await postInit(server.url, MCP_TOKEN);
  assert(r.status === 200, `status ${r.status}`);
}, { fixture: "none", transports: ["http"], flags: ["--mcp-token", MCP_TOKEN] });

test("test_tools.py::test_mcp_token_rejects_code_sandbox_token", async ({ server, jup }, assert) => {
  const r = await postInit(server.url, jup.token);
  assert(r.status === 403 || r.status === 401, `status ${r.status}`);
}, { fixture: "none", transports: ["http"], flags: ["--mcp-token", MCP_TOKEN] });

test("test_tools.py::test_insecure_noauth_allows_anonymous", async ({ server }, assert) => {
  const r = await postInit(server.url);
  assert(r.status === 200, `status ${r.status}`);
}, { fixture: "none", transports: ["http"], flags: ["--no-auth-loopback-only"] });

// tests/test_code_sandbox_token_verifier.py: the bearer token check, over HTTP.
for (const [id, token, want] of [["test_accepts_matching_token", MCP_TOKEN, 200], ["test_rejects_mismatched_token", "MY_MCP_TOKEM", 401], ["test_rejects_wrong_length_token", MCP_TOKEN + "X", 401]]) {
  test(`test_code_sandbox_token_verifier.py::${id}`, async ({ server }, assert) => {
    const r = await postInit(server.url, token);
    assert(r.status === want, `status ${r.status}, want ${want}`);
  }, { fixture: "none", transports: ["http"], flags: ["--mcp-token", MCP_TOKEN] });
}

test("test_tools.py::test_cell_manipulation[mcp_server]", async ({ c }, assert) => {
  const checkAndDelete = async (index, type, content) => {
    const info = await c.readCell(index);
    assert(info, "read_cell returned nothing");
    assert(Array.isArray(info.result), "Read cell result should be a list");
    assert(pyIn(`=====Cell ${index} | type: ${type}`, info.result[0]), `Cell metadata should be included: ${pyStr(info.result[0])}`);
    assert(pyIn(content, info.result[1]), `Cell source should be included: ${pyStr(info.result[1])}`);
    const r = await c.deleteCell([index]);
    assert(r !== null, "delete_cell result should not be None");
    assert(pyIn(`Cell ${index} (${type}) deleted successfully`, r.result), r.result);
    assert(pyIn(`deleted cell source:\n${content}`, r.result), r.result);
  };
  const markdown = "Hello **World** !";
  let r = await c.insertCell(1, "markdown", markdown);
  assert(r !== null, "insert_cell result should not be None");
  assert(pyIn("Cell inserted successfully at index 1 (markdown)!", r.result), r.result);
  await checkAndDelete(1, "markdown", markdown);

  const codeContent = "1 + 1";
  let cr = await c.insertExecuteCodeCell(1, codeContent);
  assert(parseInt(cr.result[0], 10) === 2, `insert_execute_code_cell: ${pyStr(cr.result)}`);
  cr = await c.insertExecuteCodeCell(-1, codeContent);
  assert(parseInt(cr.result[0], 10) === 2, `insert_execute_code_cell -1: ${pyStr(cr.result)}`);

  const newCode = `(${codeContent}) * 2`;
  r = await c.overwriteCellSource(1, newCode);
  assert(r !== null, "overwrite_cell_source result should not be None");
  assert(pyIn("Cell 1 overwritten successfully!", r.result), r.result);
  assert(pyIn("diff", r.result) && pyIn("-", r.result) && pyIn("+", r.result), r.result);
  await checkAndDelete(1, "code", newCode);
});

const PIL_IMAGE_CODE = `
from PIL import Image, ImageDraw
import io

image = Image.new('RGB', (200, 100), color='white')
draw = ImageDraw.Draw(image)
draw.rectangle([10, 10, 190, 90], outline='blue', width=2)
draw.ellipse([20, 20, 80, 80], fill='red')
draw.text((100, 40), "Test Image", fill='black')
buffer = io.BytesIO()
image.save(buffer, format='PNG')
buffer.seek(0)
from IPython.display import Image as IPythonImage, display
display(IPythonImage(buffer.getvalue()))
`;

test("test_tools.py::test_multimodal_output[mcp_server]", async ({ c }, assert) => {
  const r = await c.insertExecuteCodeCell(1, PIL_IMAGE_CODE);
  assert(Array.isArray(r.result), "Result should be a list");
  assert(r.result[0] && typeof r.result[0] === "object", `result[0]: ${pyStr(r.result[0])}`);
  assert(r.result[0].mimeType === "image/png", "Result should be a list of ImageContent");
  await c.deleteCell([1]);
});

test("test_tools.py::test_multi_notebook_operations[mcp_server]", async ({ c }, assert) => {
  const tag = randomBytes(4).toString("hex");
  const markerA = `# This is notebook A [${tag}]`;
  const markerB = `# This is notebook B [${tag}]\nA hidden content`;
  let r = await c.useNotebook("notebook_a", "new.ipynb");
  assert(r.includes("Successfully activate notebook 'notebook_a'"), r);
  await c.insertCell(-1, "markdown", markerA);
  r = await c.useNotebook("notebook_b", "notebook.ipynb");
  assert(r.includes("Successfully activate notebook 'notebook_b'"), r);
  await c.insertCell(-1, "markdown", markerB);
  r = await c.useNotebook("notebook_a", "new.ipynb");
  assert(r.includes("Reactivating notebook 'notebook_a' and deactivating 'notebook_b'."), r);
  const listA = await c.readNotebook("notebook_a", "brief", 0, 1000);
  assert(listA.includes(markerA), listA);
  await c.useNotebook("notebook_b", "notebook.ipynb");
  const listB = await c.readNotebook("notebook_b", "detailed", 0, 1000);
  assert(listB.includes(markerB), listB);
  const list = await c.listNotebooks();
  assert(list.includes("notebook_a") && list.includes("notebook_b") && list.includes("✓"), list);
  const restart = await c.restartNotebook("notebook_a");
  assert(restart.includes("Notebook 'notebook_a' kernel restarted successfully"), restart);
  r = await c.unuseNotebook("notebook_a");
  assert(r.includes("Notebook 'notebook_a' unused successfully"), r);
  r = await c.unuseNotebook("notebook_b");
  assert(r.includes("Notebook 'notebook_b' unused successfully"), r);
});

test("test_tools.py::test_notebooks_error_cases[mcp_server]", async ({ c }, assert) => {
  const e1 = await c.useNotebook("nonexistent", "nonexistent.ipynb");
  assert(e1.includes("not found"), e1);
  const e2 = await c.restartNotebook("nonexistent_notebook");
  assert(e2.includes("not connected"), e2);
  const e3 = await c.unuseNotebook("nonexistent_notebook");
  assert(e3.includes("not connected"), e3);
});

test("test_tools.py::test_read_cell_without_active_notebook[mcp_server]", async ({ c }, assert) => {
  const r = await c.readCell(0);
  assert(r !== null, "read_cell raised an unhandled exception (got None)");
  assert(Array.isArray(r.result), "Result should be a list");
  const text = joined(r.result);
  assert(text.includes("=====Cell 0") || text.toLowerCase().includes("use_notebook"), text.slice(0, 300));
});

// The reference interrupts a kernel on a timeout; this server leaves the
// run going unless --interrupt-on-timeout. Cases about timeouts run both
// ways: as ported, and with the flag ("-interrupt_on_timeout").
const INTERRUPT = ["--interrupt-on-timeout"];
const bothWays = (id, fn, o = {}) => {
  test(id, fn, o);
  test(id.replace(/\]$/, "-interrupt_on_timeout]").replace(/([^\]])$/, "$1[interrupt_on_timeout]"), fn, { ...o, flags: [...(o.flags || []), ...INTERRUPT], group: o.group && `${o.group}+interrupt` });
};

bothWays("test_tools.py::test_execute_code[mcp_server]", async ({ c }, assert) => {
  await c.executeCode("words='Hello IPython World!'");
  let r = await c.executeCode("%who");
  assert(pyIn("words", r.result[0]), pyStr(r.result));
  r = await c.executeCode("!echo 'Hello from shell'");
  assert(pyIn("Hello from shell", r.result[0]), pyStr(r.result));
  r = await c.executeCode("import time\ntime.sleep(5)", 2);
  assert(pyIn("TIMEOUT ERROR", r.result[0]), pyStr(r.result));
});

test("test_tools.py::test_sandbox_lifecycle_and_execute_code_routing[mcp_server]", async ({ c }, assert) => {
  const name = `eval-e2e-${randomBytes(4).toString("hex")}`;
  const seed = await c.executeCode("kernel_only_var = 42\nprint('KERNEL_SEEDED')");
  assert(seed !== null);
  try {
    const launch = await c.launchSandbox(name, "eval", 30);
    assert(launch !== null, "launch_sandbox returned None");
    let payload = "result" in launch ? launch.result : launch;
    if (Array.isArray(payload)) payload = payload[0];
    assert(payload && typeof payload === "object", `payload ${pyStr(payload)}`);
    assert(payload.sandbox.name === name && payload.sandbox.variant === "eval", pyStr(payload));
    const listed = await c.listSandboxes();
    assert(listed !== null);
    let lp = "result" in listed ? listed.result : listed;
    if (lp && typeof lp === "object" && !Array.isArray(lp) && "sandboxes" in lp) lp = lp.sandboxes;
    else if (lp && typeof lp === "object" && !Array.isArray(lp) && "name" in lp) lp = [lp];
    if (typeof lp === "string") lp = JSON.parse(lp);
    assert(lp.filter((x) => x && typeof x === "object").map((x) => x.name).includes(name), pyStr(lp));
    const use = await c.useSandbox(name);
    assert(use !== null && use.toLowerCase().includes("now active"), use);
    const ex = await c.executeCode("sandbox_only_var = 'sandbox-route-ok'\nprint(sandbox_only_var)");
    assert(ex !== null && joined(ex.result, "\n").includes("sandbox-route-ok"), pyStr(ex?.result));
    const clear = await c.useSandbox(null);
    assert(clear !== null && clear.toLowerCase().includes("routing disabled"), clear);
    const who = await c.executeCode("%who");
    const out = joined(who.result, "\n");
    assert(out.includes("kernel_only_var") && !out.includes("sandbox_only_var"), out);
  } finally {
    await c.useSandbox(null);
    const t = await c.terminateSandbox(name);
    if (t) assert(t.toLowerCase().includes("terminated") || t.toLowerCase().includes("not found"), t);
  }
});

test("test_tools.py::test_list_kernels[mcp_server]", async ({ c }, assert) => {
  const list = await c.listKernels();
  assert(list.includes("ID\tName\tDisplay_Name\tLanguage\tState\tConnections\tLast_Activity\tEnvironment"), list);
});

test("test_tools.py::test_allowed_jupyter_mcp_tools_integration[mcp_server]", async ({ c }, assert) => {
  const names = (await c.listTools()).tools.map((t) => t.name);
  const lab = names.filter((n) => n.startsWith("notebook_"));
  if (lab.length) assert(names.includes("notebook_run-all-cells") || lab.length > 0);
});

// ---------------------------------------------------------------------------
// tests/test_move_cell.py, Section B (integration)
// ---------------------------------------------------------------------------

const setupCells = async (c, labels, type = "code") => {
  for (const [i, l] of labels.entries()) await c.insertCell(i + 1, type, l);
};
const executionCount = (header) => String(header).split("execution count:")[1].replace(/^[= ]+|[= ]+$/g, "");
const readCellHeader = async (c, index) => {
  const cell = await c.readCell(index);
  const parts = cell.result;
  const header = pyStr(parts[0]);
  const type = header.split("type: ")[1].split(" |")[0].trim();
  const source = parts.length > 1 ? pyStr(parts[1]) : "";
  return [type, source];
};
const assertOrder = async (c, assert, expected) => {
  for (const [i, label] of expected.entries()) {
    const [, source] = await readCellHeader(c, i + 1);
    assert(source === label, `Expected '${label}' at index ${i + 1}, got: '${source}'`);
  }
};
const cleanup = (c, count) => c.deleteCell(Array.from({ length: count }, (_, i) => count - i));

test("test_move_cell.py::test_move_cell_basic_forward[mcp_server]", async ({ c }, assert) => {
  await setupCells(c, ["A", "B", "C", "D"]);
  const r = await c.moveCell(1, 3);
  assert(r !== null);
  assert(lower(r.result).includes("move"), r.result);
  await assertOrder(c, assert, ["B", "C", "A", "D"]);
  await cleanup(c, 4);
});

test("test_move_cell.py::test_move_cell_basic_backward[mcp_server]", async ({ c }, assert) => {
  await setupCells(c, ["A", "B", "C", "D"]);
  assert((await c.moveCell(3, 1)) !== null);
  await assertOrder(c, assert, ["C", "A", "B", "D"]);
  await cleanup(c, 4);
});

test("test_move_cell.py::test_move_cell_same_position_noop[mcp_server]", async ({ c }, assert) => {
  await setupCells(c, ["stay_put", "also_stay"]);
  assert((await c.moveCell(1, 1)) !== null);
  await assertOrder(c, assert, ["stay_put", "also_stay"]);
  await cleanup(c, 2);
});

test("test_move_cell.py::test_move_cell_first_to_last[mcp_server]", async ({ c }, assert) => {
  await setupCells(c, ["first", "second", "third"]);
  await c.moveCell(1, 3);
  await assertOrder(c, assert, ["second", "third", "first"]);
  await cleanup(c, 3);
});

test("test_move_cell.py::test_move_cell_last_to_first[mcp_server]", async ({ c }, assert) => {
  await setupCells(c, ["first", "second", "third"]);
  await c.moveCell(3, 1);
  await assertOrder(c, assert, ["third", "first", "second"]);
  await cleanup(c, 3);
});

test("test_move_cell.py::test_move_cell_preserves_cell_type[mcp_server]", async ({ c }, assert) => {
  await c.insertCell(1, "markdown", "# Header");
  await c.insertCell(2, "code", "x = 1");
  await c.moveCell(1, 2);
  const [t1, s1] = await readCellHeader(c, 1);
  const [t2, s2] = await readCellHeader(c, 2);
  assert(t1 === "code" && s1 === "x = 1", `${t1} ${s1}`);
  assert(t2 === "markdown" && s2 === "# Header", `${t2} ${s2}`);
  await cleanup(c, 2);
});

test("test_move_cell.py::test_move_cell_preserves_source_content[mcp_server]", async ({ c }, assert) => {
  const source = "import numpy as np\n\nx = np.array([1, 2, 3])\nprint(x.sum())";
  await c.insertCell(1, "code", source);
  await c.insertCell(2, "code", "placeholder");
  await c.moveCell(1, 2);
  const [, moved] = await readCellHeader(c, 2);
  assert(moved === source, moved);
  await cleanup(c, 2);
});

for (const [param, s, t] of [["forward", 1, 2], ["backward", 2, 1]]) {
  test(`test_move_cell.py::test_move_cell_adjacent[mcp_server-${param}]`, async ({ c }, assert) => {
    await setupCells(c, ["cell_A", "cell_B"]);
    assert((await c.moveCell(s, t)) !== null);
    await assertOrder(c, assert, ["cell_B", "cell_A"]);
    await cleanup(c, 2);
  });
}

for (const [param, s, t] of [["source_oob", 9999, 0], ["target_oob", 0, 9999]]) {
  test(`test_move_cell.py::test_move_cell_error_out_of_range[mcp_server-${param}]`, async ({ c }, assert) => {
    await c.insertCell(1, "code", "only_cell");
    const r = await c.moveCell(s, t);
    assert(r === null, `expected an error, got ${pyStr(r?.result)}`);
    await cleanup(c, 1);
  });
}

test("test_move_cell.py::test_move_cell_preserves_outputs[mcp_server]", async ({ c }, assert) => {
  await c.insertCell(1, "code", "print('hello')");
  await c.insertCell(2, "code", "placeholder");
  const ex = await c.executeCell(1);
  assert(ex !== null, "execute_cell failed");
  const before = await c.readCell(1, true);
  const [beforeHeader, , ...beforeOutputs] = before.result;
  await c.moveCell(1, 2);
  const cell = await c.readCell(2, true);
  const [header, , ...outputs] = cell.result;
  assert(joined(outputs).trim().includes("hello"), `outputs ${pyStr(outputs)}`);
  assert(JSON.stringify(outputs) === JSON.stringify(beforeOutputs), `${pyStr(outputs)} != ${pyStr(beforeOutputs)}`);
  assert(executionCount(header) === executionCount(beforeHeader), `${header} vs ${beforeHeader}`);
  assert(executionCount(header) !== "N/A", header);
  await cleanup(c, 2);
});

test("test_move_cell.py::test_move_cell_then_execute[mcp_server]", async ({ c }, assert) => {
  await setupCells(c, ["print(42)", "placeholder"]);
  await c.moveCell(1, 2);
  const ex = await c.executeCell(2);
  assert(ex !== null);
  const text = joined(ex.result).trim();
  assert(text === "42", `output: '${text}'`);
  await cleanup(c, 2);
});

test("test_move_cell.py::test_move_cell_multiple_sequential_moves[mcp_server]", async ({ c }, assert) => {
  await setupCells(c, ["A", "B", "C"]);
  await c.moveCell(1, 3);
  await c.moveCell(2, 1);
  await assertOrder(c, assert, ["C", "B", "A"]);
  await cleanup(c, 3);
});

// ---------------------------------------------------------------------------
// Unit tests, through MCP. They work in notebook "unit" (unit.ipynb), set to
// exactly the cells each case needs, so that one server serves a whole file.
// ---------------------------------------------------------------------------

const useUnit = async ({ c }) => {
  const r = await c.call("use_notebook", { notebook_name: "unit", notebook_path: "unit.ipynb" });
  if (r.isError) throw new Error(`use_notebook unit: ${extractText(r)}`);
};

// setUnitCells makes the unit notebook hold exactly these cells ([type,
// source] or a source for a code cell), through the tools.
async function setUnitCells({ c, client }, cells) {
  const r = await client.readResource({ uri: "notebook://unit" });
  const n = JSON.parse(r.contents[0].text).cells.length;
  if (n > 0) {
    const d = await c.call("delete_cell", { cell_indices: Array.from({ length: n }, (_, i) => n - 1 - i), notebook_name: "unit" });
    if (d.isError) throw new Error(`setup: delete_cell: ${extractText(d)}`);
  }
  for (const [i, cell] of cells.entries()) {
    const [type, source] = Array.isArray(cell) ? cell : ["code", cell];
    const ins = await c.call("insert_cell", { cell_index: i, cell_type: type, cell_source: source, notebook_name: "unit" });
    if (ins.isError) throw new Error(`setup: insert_cell: ${extractText(ins)}`);
  }
}

// unitSources reads every cell's source back the way a reference client
// reads one: the second entry of read_cell.
async function unitSources(ctx) {
  const r = await ctx.client.readResource({ uri: "notebook://unit" });
  const n = JSON.parse(r.contents[0].text).cells.length;
  const out = [];
  for (let i = 0; i < n; i++) out.push((await readCellHeader(ctx.c, i))[1]);
  return out;
}

// unitFile reads unit.ipynb as the Jupyter server has it.
const unitFile = (ctx) => ctx.jup.readNotebook("unit.ipynb");
const fileSources = (nbj) => nbj.cells.map((x) => (Array.isArray(x.source) ? x.source.join("") : x.source));

const unit = (file) => (id, fn, o = {}) => test(`${file}::${id}`, fn, { group: file, groupSetup: useUnit, ...o });

// tests/test_move_cell.py, Section A
{
  const t = unit("test_move_cell.py");
  const labels = (n) => ["A", "B", "C", "D", "E"].slice(0, n);
  for (const [s, tg, total] of [[-1, 0, 5], [5, 0, 5], [0, -1, 5], [0, 5, 5], [0, 1, 1], [0, 0, 0]]) {
    t(`TestMoveCellValidation::test_invalid_indices_raise_error[${s}-${tg}-${total}]`, async (ctx, assert) => {
      await setUnitCells(ctx, labels(total));
      const r = await ctx.c.moveCell(s, tg);
      assert(r === null, `move_cell(${s}, ${tg}) on ${total} cells was accepted: ${pyStr(r?.result)}`);
      assert(JSON.stringify(fileSources(unitFile(ctx))) === JSON.stringify(labels(total)), "the notebook changed");
    });
  }
  for (const [s, tg, total] of [[2, 2, 5], [0, 3, 5], [3, 0, 5], [4, 0, 5], [0, 4, 5], [0, 0, 1]]) {
    t(`TestMoveCellValidation::test_valid_indices_pass[${s}-${tg}-${total}]`, async (ctx, assert) => {
      await setUnitCells(ctx, labels(total));
      const r = await ctx.c.moveCell(s, tg);
      assert(r !== null, `move_cell(${s}, ${tg}) on ${total} cells was refused`);
    });
  }
  const reorder = [
    [0, 3, ["B", "C", "D", "A", "E"]], [0, 4, ["B", "C", "D", "E", "A"]], [1, 3, ["A", "C", "D", "B", "E"]],
    [3, 0, ["D", "A", "B", "C", "E"]], [4, 0, ["E", "A", "B", "C", "D"]], [3, 1, ["A", "D", "B", "C", "E"]],
    [1, 2, ["A", "C", "B", "D", "E"]], [2, 1, ["A", "C", "B", "D", "E"]], [2, 2, ["A", "B", "C", "D", "E"]],
  ];
  for (const [s, tg, expected] of reorder) {
    t(`TestMoveCellApply::test_reorder[${s}-${tg}-expected${reorder.findIndex((x) => x[0] === s && x[1] === tg)}]`, async (ctx, assert) => {
      await setUnitCells(ctx, labels(5));
      await ctx.c.moveCell(s, tg);
      const got = await unitSources(ctx);
      assert(JSON.stringify(got) === JSON.stringify(expected), `${pyStr(got)} != ${pyStr(expected)}`);
    });
  }
  t("TestMoveCellApply::test_single_cell_noop", async (ctx, assert) => {
    await setUnitCells(ctx, ["X"]);
    await ctx.c.moveCell(0, 0);
    const got = await unitSources(ctx);
    assert(JSON.stringify(got) === JSON.stringify(["X"]), pyStr(got));
  });
  t("TestMoveCellApply::test_two_cells_swap", async (ctx, assert) => {
    await setUnitCells(ctx, ["A", "B"]);
    await ctx.c.moveCell(0, 1);
    const got = await unitSources(ctx);
    assert(JSON.stringify(got) === JSON.stringify(["B", "A"]), pyStr(got));
  });
  t("TestMoveCellPreservesPayload::test_websocket_move_preserves_cell_payload", async (ctx, assert) => {
    await setUnitCells(ctx, ["a = 1", "print('hello')", "b = 2"]);
    const ex = await ctx.c.call("execute_cell", { cell_index: 1 });
    assert(!ex.isError, extractText(ex));
    const before = unitFile(ctx).cells[1];
    await ctx.c.moveCell(1, 2);
    const after = unitFile(ctx).cells[2];
    assert(fileSources({ cells: [after] })[0] === "print('hello')", pyStr(after.source));
    assert(JSON.stringify(after.outputs) === JSON.stringify(before.outputs), `${JSON.stringify(after.outputs)} != ${JSON.stringify(before.outputs)}`);
    assert(after.execution_count === before.execution_count && after.execution_count !== null, `${after.execution_count}`);
    assert(after.id === before.id, `${after.id} != ${before.id}`);
  });
}

// tests/test_edit_cell_source.py, Section B (integration)
{
  const e = (id, fn) => test(`test_edit_cell_source.py::${id}[mcp_server]`, fn);
  e("test_edit_cell_source_basic_code_cell", async ({ c }, assert) => {
    await c.insertCell(1, "code", "x = 1\ny = 2\nprint(x + y)");
    const r = await c.editCellSource(1, "x = 1", "x = 10");
    assert(r !== null, "edit_cell_source should return a result");
    assert(lower(r.result).includes("diff") || r.result.includes("-"), r.result);
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_basic_markdown_cell", async ({ c }, assert) => {
    await c.insertCell(1, "markdown", "# Title\nSome **bold** text");
    const r = await c.editCellSource(1, "# Title", "# New Title");
    assert(r !== null, "edit_cell_source should return a result");
    assert(lower(r.result).includes("diff") || r.result.includes("-"), r.result);
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_then_read_verifies_change", async ({ c }, assert) => {
    await c.insertCell(1, "code", "alpha = 1\nbeta = 2");
    await c.editCellSource(1, "alpha = 1", "alpha = 99");
    const info = await c.readCell(1);
    assert(info !== null);
    const text = joined(info.result);
    assert(text.includes("alpha = 99") && text.includes("beta = 2"), text);
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_then_execute", async ({ c }, assert) => {
    await c.insertCell(1, "code", "print('before')");
    await c.editCellSource(1, "before", "after");
    const ex = await c.executeCell(1);
    assert(ex !== null);
    assert(joined(ex.result).includes("after"), pyStr(ex.result));
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_replace_all", async ({ c }, assert) => {
    await c.insertCell(1, "code", "a = 1\na = 2\na = 3");
    assert((await c.editCellSource(1, "a = ", "b = ", true)) !== null);
    const text = joined((await c.readCell(1)).result);
    assert(text.includes("b = 1") && text.includes("b = 2") && text.includes("b = 3"), text);
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_error_cell_index_out_of_range", async ({ c }, assert) => {
    assert((await c.editCellSource(9999, "x", "y")) === null);
  });
  e("test_edit_cell_source_error_old_string_not_found", async ({ c }, assert) => {
    await c.insertCell(1, "code", "x = 1");
    assert((await c.editCellSource(1, "nonexistent_string", "replacement")) === null);
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_error_ambiguous_match", async ({ c }, assert) => {
    await c.insertCell(1, "code", "x = 1\nx = 2\nx = 3");
    assert((await c.editCellSource(1, "x = ", "y = ")) === null);
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_preserves_cell_type_and_metadata", async ({ c }, assert) => {
    await c.insertCell(1, "markdown", "# Hello World");
    await c.editCellSource(1, "Hello", "Goodbye");
    const info = await c.readCell(1);
    assert(info !== null);
    const text = joined(info.result);
    assert(text.includes("markdown") && text.includes("Goodbye World"), text);
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_sequential_edits_on_same_cell", async ({ c }, assert) => {
    await c.insertCell(1, "code", "step = 0");
    await c.editCellSource(1, "step = 0", "step = 1");
    await c.editCellSource(1, "step = 1", "step = 2");
    await c.editCellSource(1, "step = 2", "step = 3");
    assert(joined((await c.readCell(1)).result).includes("step = 3"));
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_after_insert_workflow", async ({ c }, assert) => {
    await c.insertCell(1, "code", "placeholder = True");
    assert((await c.editCellSource(1, "placeholder = True", "real_code = 42")) !== null);
    assert(joined((await c.readCell(1)).result).includes("real_code = 42"));
    await c.deleteCell([1]);
  });
  e("test_edit_cell_source_noop_same_old_and_new", async ({ c }, assert) => {
    await c.insertCell(1, "code", "unchanged = True");
    const r = await c.editCellSource(1, "unchanged = True", "unchanged = True");
    assert(r !== null, "old_string == new_string was refused");
    assert(joined((await c.readCell(1)).result).includes("unchanged = True"));
    await c.deleteCell([1]);
  });
}

// tests/test_edit_cell_source.py, Section A: _validate_edit and _apply_edit,
// each as an edit_cell_source call on a one-cell notebook.
{
  const t = unit("test_edit_cell_source.py");
  const refused = (id, source, oldS, newS, replaceAll) => t(id, async (ctx, assert) => {
    await setUnitCells(ctx, [source]);
    const r = await ctx.c.editCellSource(0, oldS, newS, replaceAll);
    assert(r === null, `accepted: ${pyStr(r?.result)}`);
    assert(fileSources(unitFile(ctx))[0] === source, "the cell changed");
  });
  const accepted = (id, source, oldS, newS, replaceAll) => t(id, async (ctx, assert) => {
    await setUnitCells(ctx, [source]);
    assert((await ctx.c.editCellSource(0, oldS, newS, replaceAll)) !== null, "refused");
  });
  const applies = (id, source, oldS, newS, replaceAll, check) => t(id, async (ctx, assert) => {
    await setUnitCells(ctx, [source]);
    await ctx.c.editCellSource(0, oldS, newS, replaceAll);
    const [, got] = await readCellHeader(ctx.c, 0);
    check(got, assert);
  });
  const becomes = (expected) => (got, assert) => assert(got === expected, `${JSON.stringify(got)} != ${JSON.stringify(expected)}`);

  refused("TestEditCellSourceValidation::test_empty_old_string_raises_error", "some source", "", "replacement", false);
  refused("TestEditCellSourceValidation::test_old_string_not_found_raises_error", "hello world", "xyz", "abc", false);
  refused("TestEditCellSourceValidation::test_old_string_ambiguous_without_replace_all", "aaa", "a", "b", false);
  accepted("TestEditCellSourceValidation::test_old_string_ambiguous_with_replace_all_passes", "aaa", "a", "b", true);
  accepted("TestEditCellSourceValidation::test_old_string_unique_without_replace_all_passes", "hello world", "hello", "hi", false);

  const A = "TestEditCellSourceApply::";
  applies(`${A}test_single_replacement_happy_path`, "hello world", "hello", "hi", false, becomes("hi world"));
  applies(`${A}test_replace_all_with_multiple_occurrences`, "aXbXc", "X", "Y", true, becomes("aYbYc"));
  applies(`${A}test_replace_all_with_single_occurrence`, "hello world", "hello", "hi", true, becomes("hi world"));
  t(`${A}test_old_string_equals_new_string_noop`, async (ctx, assert) => {
    await setUnitCells(ctx, ["unchanged content"]);
    const r = await ctx.c.editCellSource(0, "unchanged", "unchanged", false);
    assert(r !== null, "old_string == new_string was refused");
    const [, got] = await readCellHeader(ctx.c, 0);
    assert(got === "unchanged content", JSON.stringify(got));
  });
  applies(`${A}test_replace_with_empty_string_deletion`, "hello world", " world", "", false, becomes("hello"));
  applies(`${A}test_multiline_old_string`, "line1\nline2\nline3", "line1\nline2", "replaced", false, becomes("replaced\nline3"));
  applies(`${A}test_multiline_new_string_expansion`, "before\noriginal\nafter", "original", "new1\nnew2\nnew3", false, becomes("before\nnew1\nnew2\nnew3\nafter"));
  applies(`${A}test_special_characters_quotes_backslashes`, 'path = "C:\\\\Users\\\\test"', '"C:\\\\Users\\\\test"', '"D:\\\\Data\\\\output"', false, becomes('path = "D:\\\\Data\\\\output"'));
  applies(`${A}test_regex_metacharacters_literal_match`, "value = data[0] + (x * y)", "[0] + (x * y)", "[1] + (a * b)", false, becomes("value = data[1] + (a * b)"));
  applies(`${A}test_unicode_content`, "café résumé naïve", "résumé", "resume", false, becomes("café resume naïve"));
  applies(`${A}test_cjk_characters`, "日本語テスト", "テスト", "試験", false, becomes("日本語試験"));
  applies(`${A}test_tab_sensitive_matching`, "\tindented line", "\tindented", "\t\tdouble_indented", false, becomes("\t\tdouble_indented line"));
  applies(`${A}test_trailing_space_sensitivity`, "word   ", "word   ", "word", false, becomes("word"));
  refused(`${A}test_indentation_sensitivity_wrong_indent_not_found`, "    four_spaces", "  two_spaces", "x", false);
  applies(`${A}test_old_string_at_beginning_of_source`, "START rest of text", "START", "BEGIN", false, becomes("BEGIN rest of text"));
  applies(`${A}test_old_string_at_end_of_source`, "rest of text END", "END", "FINISH", false, becomes("rest of text FINISH"));
  applies(`${A}test_old_string_is_entire_source`, "entire content", "entire content", "new content", false, becomes("new content"));
  const long = Array.from({ length: 10001 }, (_, i) => `line ${i}: some content here`).join("\n");
  applies(`${A}test_very_long_source`, long, "line 5000: some content here", "line 5000: MODIFIED content here", false, (got, assert) => {
    assert(got.includes("MODIFIED"), "MODIFIED missing");
    assert(got.includes("line 4999: some content here") && got.includes("line 5001: some content here"), "surrounding lines changed");
  });
  applies(`${A}test_overlapping_patterns_with_replace_all`, "aaa", "a", "ab", true, becomes("ababab"));
}

// tests/test_delete_cell.py, Sections A and B: the indices a delete takes.
{
  const t = unit("test_delete_cell.py");
  const five = Array.from({ length: 5 }, (_, i) => `cell ${i}`);
  for (const [indices, total] of [[[-1], 5], [[-100], 5], [[0, -1], 5], [[5], 5], [[999], 5], [[0, 5], 5], [[1, 1], 5], [[0, 2, 2], 5]]) {
    t(`TestDeleteCellValidation::test_invalid_indices_raise_error[indices${JSON.stringify(indices)}-${total}]`, async (ctx, assert) => {
      const cells = five.slice(0, total);
      await setUnitCells(ctx, cells);
      const r = await ctx.c.deleteCell(indices);
      assert(r === null, `delete_cell(${JSON.stringify(indices)}) on ${total} cells was accepted: ${pyStr(r?.result)}`);
      assert(JSON.stringify(fileSources(unitFile(ctx))) === JSON.stringify(cells), "the notebook changed");
    });
  }
  for (const [indices, total] of [[[0], 5], [[4], 5], [[0, 2, 4], 5], [[0], 1]]) {
    t(`TestDeleteCellValidation::test_valid_indices_pass[indices${JSON.stringify(indices)}-${total}]`, async (ctx, assert) => {
      await setUnitCells(ctx, five.slice(0, total));
      assert((await ctx.c.deleteCell(indices)) !== null, "refused");
    });
  }
  // The reference reads the tool's ValueError; over MCP that is the error text.
  const refusedSaying = (id, n, indices, word) => t(`TestDeleteCellFileNegativeIndices::${id}`, async (ctx, assert) => {
    const cells = five.slice(0, n);
    await setUnitCells(ctx, cells);
    const r = await ctx.c.call("delete_cell", { cell_indices: indices });
    assert(r.isError, `accepted: ${extractText(r)}`);
    assert(extractText(r).includes(word), `error does not say "${word}": ${extractText(r)}`);
    assert(JSON.stringify(fileSources(unitFile(ctx))) === JSON.stringify(cells), "notebook changed");
  });
  refusedSaying("test_out_of_range_negative_raises_clean_error", 5, [-100], "out of range");
  refusedSaying("test_in_range_negative_does_not_delete_wrong_cell", 5, [-1], "out of range");
  refusedSaying("test_mixed_positive_and_negative_rejected", 5, [0, -1], "out of range");
  t("TestDeleteCellFileNegativeIndices::test_valid_delete_still_works", async (ctx, assert) => {
    await setUnitCells(ctx, five);
    const r = await ctx.c.call("delete_cell", { cell_indices: [1, 3] });
    assert(!r.isError, extractText(r));
    const text = extractText(r);
    assert(text.includes("Cell 1 (code) deleted successfully") && text.includes("Cell 3 (code) deleted successfully"), text);
    assert(JSON.stringify(fileSources(unitFile(ctx))) === JSON.stringify(["cell 0", "cell 2", "cell 4"]), JSON.stringify(fileSources(unitFile(ctx))));
  });
  refusedSaying("test_duplicate_index_rejected_instead_of_deleting_neighbor", 4, [1, 1], "duplicate");
}

// tests/test_clear_cell_output.py, Section A (the file is the server's).
{
  const t = unit("test_clear_cell_output.py");
  const run = async (ctx, index) => {
    const r = await ctx.c.call("execute_cell", { cell_index: index, timeout: 120 });
    if (r.isError) throw new Error(`setup: execute_cell ${index}: ${extractText(r)}`);
  };
  const C = "TestClearCellOutputFile::";
  t(`${C}test_clears_outputs_and_execution_count`, async (ctx, assert) => {
    await setUnitCells(ctx, ["print('hi')"]);
    await run(ctx, 0);
    assert(unitFile(ctx).cells[0].outputs.length === 1, "setup: no output");
    const r = await ctx.c.call("clear_cell_output", { cell_index: 0 });
    assert(!r.isError, extractText(r));
    const cell = unitFile(ctx).cells[0];
    assert(cell.outputs.length === 0 && cell.execution_count === null, JSON.stringify(cell));
  });
  t(`${C}test_no_output_cell_returns_zero`, async (ctx, assert) => {
    await setUnitCells(ctx, ["1 + 1"]);
    const r = await ctx.c.call("clear_cell_output", { cell_index: 0 });
    assert(!r.isError, extractText(r));
    const cell = unitFile(ctx).cells[0];
    assert(cell.outputs.length === 0 && cell.execution_count === null, JSON.stringify(cell));
  });
  t(`${C}test_only_targeted_cell_is_touched`, async (ctx, assert) => {
    await setUnitCells(ctx, ["print('a')", "print('b')"]);
    await run(ctx, 0);
    await run(ctx, 1);
    const before = unitFile(ctx).cells[0];
    const r = await ctx.c.call("clear_cell_output", { cell_index: 1 });
    assert(!r.isError, extractText(r));
    const [c0, c1] = unitFile(ctx).cells;
    assert(c0.outputs.length === 1 && c0.execution_count === before.execution_count, JSON.stringify(c0));
    assert(c1.outputs.length === 0 && c1.execution_count === null, JSON.stringify(c1));
  });
  const refusedSaying = (id, cells, index, word) => t(`${C}${id}`, async (ctx, assert) => {
    await setUnitCells(ctx, cells);
    const r = await ctx.c.call("clear_cell_output", { cell_index: index });
    assert(r.isError, `accepted: ${extractText(r)}`);
    assert(extractText(r).includes(word), `error does not say "${word}": ${extractText(r)}`);
  });
  refusedSaying("test_markdown_cell_rejected", [["markdown", "# title"]], 0, "not a code cell");
  refusedSaying("test_out_of_range_index_raises", ["1"], 5, "out of range");
  refusedSaying("test_negative_index_raises", ["1"], -1, "out of range");
}

// ---------------------------------------------------------------------------
// tests/test_prompts.py
// ---------------------------------------------------------------------------

test("test_prompts.py::test_jupyter_cite", async ({ c }, assert) => {
  await c.useNotebook("new", "new.ipynb");
  await c.useNotebook("notebook", "notebook.ipynb");
  let r = await c.jupyterCite("test prompt", "0");
  assert(r[0].includes("# Matplotlib Examples"), `Cell 0 should contain Matplotlib Examples: ${r[0]}`);
  assert(r[0].includes("test prompt"), "Prompt should be injected");
  r = await c.jupyterCite("", "0-2,4");
  assert(r[0].includes("USER Cite cells [0, 1, 2, 4]"), r[0]);
  for (const i of [0, 1, 2, 4]) assert(r[0].includes(`=====Cell ${i}`), `Cell ${i} should be cited`);
  assert(!r[0].includes("=====Cell 3"), "Cell 3 should not be cited");
  assert(r[0].includes("=====End of Cited Cells====="), "Cited block should be terminated");
  r = await c.jupyterCite("", "0", "new");
  assert(r[0].includes("from notebook new"), r[0]);
  assert(r[0].includes("# A New Notebook"), r[0]);
});

// ---------------------------------------------------------------------------
// tests/test_cell_tools_explicit_notebook_target.py: notebook "A" current,
// "B" named explicitly; each with one cell.
// ---------------------------------------------------------------------------
{
  const F = "test_cell_tools_explicit_notebook_target.py";
  const setup = async ({ c, jup }) => {
    jup.writeNotebook("target-a.ipynb", nb([code("a_original")]));
    jup.writeNotebook("target-b.ipynb", nb([code("b_original")]));
    for (const [n, p] of [["B", "target-b.ipynb"], ["A", "target-a.ipynb"]]) {
      const r = await c.call("use_notebook", { notebook_name: n, notebook_path: p });
      if (r.isError) throw new Error(`use_notebook ${n}: ${extractText(r)}`);
    }
  };
  const t = (id, fn) => test(`${F}::${id}`, async (ctx, assert) => {
    await setup(ctx);
    await fn(ctx, assert, (p) => fileSources(ctx.jup.readNotebook(p)));
  }, { fixture: "none" });
  const ok = (r) => {
    if (r.isError) throw new Error(extractText(r));
    return r;
  };
  t("test_insert_cell_targets_explicit_notebook", async ({ c }, assert, srcs) => {
    ok(await c.call("insert_cell", { cell_index: -1, cell_type: "code", cell_source: "into_b", notebook_name: "B" }));
    assert(srcs("target-a.ipynb").length === 1, "notebook A must be untouched");
    assert(JSON.stringify(srcs("target-b.ipynb")) === JSON.stringify(["b_original", "into_b"]), JSON.stringify(srcs("target-b.ipynb")));
  });
  t("test_insert_cell_default_still_targets_current", async ({ c }, assert, srcs) => {
    ok(await c.call("insert_cell", { cell_index: -1, cell_type: "code", cell_source: "into_current" }));
    assert(srcs("target-a.ipynb").length === 2 && srcs("target-b.ipynb").length === 1);
  });
  t("test_read_cell_targets_explicit_notebook", async ({ c }, assert) => {
    const r = ok(await c.call("read_cell", { cell_index: 0, notebook_name: "B" }));
    assert(joined(structured(r).result, "\n").includes("b_original"), pyStr(structured(r).result));
  });
  t("test_delete_cell_targets_explicit_notebook", async ({ c }, assert, srcs) => {
    ok(await c.call("delete_cell", { cell_indices: [0], notebook_name: "B" }));
    assert(srcs("target-a.ipynb").length === 1, "notebook A must be untouched");
    assert(srcs("target-b.ipynb").length === 0);
  });
  t("test_overwrite_cell_source_targets_explicit_notebook", async ({ c }, assert, srcs) => {
    ok(await c.call("overwrite_cell_source", { cell_index: 0, cell_source: "b_overwritten", notebook_name: "B" }));
    assert(srcs("target-a.ipynb")[0] === "a_original" && srcs("target-b.ipynb")[0] === "b_overwritten");
  });
  t("test_edit_cell_source_targets_explicit_notebook", async ({ c }, assert, srcs) => {
    ok(await c.call("edit_cell_source", { cell_index: 0, old_string: "b_original", new_string: "b_edited", notebook_name: "B" }));
    assert(srcs("target-a.ipynb")[0] === "a_original" && srcs("target-b.ipynb")[0] === "b_edited");
  });
  t("test_clear_cell_output_targets_explicit_notebook", async ({ c, jup }, assert) => {
    // B's cell gets an output and a count by running it.
    ok(await c.call("use_notebook", { notebook_name: "B", notebook_path: "target-b.ipynb" }));
    ok(await c.call("overwrite_cell_source", { cell_index: 0, cell_source: "print('hi')" }));
    ok(await c.call("execute_cell", { cell_index: 0, timeout: 120 }));
    ok(await c.call("use_notebook", { notebook_name: "A", notebook_path: "target-a.ipynb" }));
    const aBefore = jup.readNotebook("target-a.ipynb").cells[0];
    ok(await c.call("clear_cell_output", { cell_index: 0, notebook_name: "B" }));
    const b = jup.readNotebook("target-b.ipynb").cells[0];
    assert(b.outputs.length === 0 && b.execution_count === null, JSON.stringify(b));
    assert(JSON.stringify(jup.readNotebook("target-a.ipynb").cells[0]) === JSON.stringify(aBefore), "notebook A must be untouched");
  });
  t("test_move_cell_targets_explicit_notebook", async ({ c }, assert, srcs) => {
    ok(await c.call("insert_cell", { cell_index: 1, cell_type: "code", cell_source: "second", notebook_name: "B" }));
    ok(await c.call("move_cell", { source_index: 0, target_index: 1, notebook_name: "B" }));
    assert(srcs("target-a.ipynb")[0] === "a_original" && srcs("target-b.ipynb")[1] === "b_original", JSON.stringify(srcs("target-b.ipynb")));
  });
  t("test_unknown_notebook_name_raises", async ({ c }, assert, srcs) => {
    const r = await c.call("insert_cell", { cell_index: -1, cell_type: "code", cell_source: "x", notebook_name: "does-not-exist" });
    assert(r.isError, "accepted");
    assert(extractText(r).includes("not connected"), extractText(r));
    assert(srcs("target-a.ipynb").length === 1, "fell back to the current notebook");
  });
}

// ---------------------------------------------------------------------------
// tests/test_execute_code_timeout.py: 0 is the server default, a timeout is
// capped by the maximum, the tool's own default is 30. Here the server's
// default is 1 s and its maximum 3 s, and what a run had time for shows which
// timeout applied.
// ---------------------------------------------------------------------------
{
  const t = (id, fn) => test(`test_execute_code_timeout.py::${id}`, fn, { group: "test_execute_code_timeout.py", flags: ["--timeout", "1", "--max-timeout", "3"] });
  const timedOut = (r) => joined(r.result).includes("TIMEOUT");
  t("test_positive_timeout_is_clamped_to_max", async ({ c }, assert) => {
    const r = await c.executeCode("import time; time.sleep(5); print('done')", 3600);
    assert(timedOut(r) && !joined(r.result).includes("done"), `timeout 3600 was not capped at 3 s: ${pyStr(r.result)}`);
  });
  t("test_zero_timeout_uses_config_default", async ({ c }, assert) => {
    await sleep(4000); // the previous case's run ends first
    const r = await c.executeCode("import time; time.sleep(2); print('done')", 0);
    assert(timedOut(r), `timeout 0 did not use the server's default of 1 s: ${pyStr(r.result)}`);
  });
  t("test_in_range_timeout_is_passed_through", async ({ c }, assert) => {
    await sleep(2000);
    const r = await c.executeCode("import time; time.sleep(1.5); print('done')", 3);
    assert(joined(r.result).includes("done") && !timedOut(r), `timeout 3: ${pyStr(r.result)}`);
  });
  t("test_omitted_timeout_keeps_the_default", async ({ c }, assert) => {
    const r = await c.call("execute_code", { code: "import time; time.sleep(1.5); print('done')" });
    const out = joined(structured(r).result);
    assert(out.includes("done") && !out.includes("TIMEOUT"), `omitted timeout (30, capped at 3) timed out at the server default: ${out}`);
  });
}

// ---------------------------------------------------------------------------
// tests/test_restart_notebook_tool.py: a kernel removed from outside (culled,
// or deleted through Jupyter's API) is replaced on restart.
// ---------------------------------------------------------------------------
{
  const F = "test_restart_notebook_tool.py";
  const open = async ({ c, jup }) => {
    jup.writeNotebook("work/test.ipynb", nb([code("1")]));
    const r = await c.call("use_notebook", { notebook_name: "nb", notebook_path: "work/test.ipynb" });
    if (r.isError) throw new Error(extractText(r));
  };
  const kernelOf = async (c, name) => {
    const r = structured(await c.call("list_notebooks"));
    return r.items.find((x) => x.Name === name)?.Kernel_ID;
  };
  test(`${F}::test_restart_reprovisions_when_kernel_culled`, async (ctx, assert) => {
    await open(ctx);
    const dead = await kernelOf(ctx.c, "nb");
    await ctx.jup.api("DELETE", `/api/kernels/${dead}`);
    const result = await ctx.c.restartNotebook("nb");
    const now = await kernelOf(ctx.c, "nb");
    assert(now && now !== dead, `kernel still ${now}`);
    assert(result.includes("reprovisioned"), result);
    assert(result.includes(now), `the answer does not name the new kernel ${now}: ${result}`);
    const cwd = await ctx.c.executeCode("import os; print(os.getcwd())");
    assert(joined(cwd.result).trim().endsWith("/work"), `new kernel not started in the notebook's directory: ${pyStr(cwd.result)}`);
  }, { fixture: "none" });
  test(`${F}::test_restart_live_kernel_is_unchanged`, async (ctx, assert) => {
    await open(ctx);
    const k = await kernelOf(ctx.c, "nb");
    const result = await ctx.c.restartNotebook("nb");
    assert(result.includes("restarted successfully"), result);
    assert((await kernelOf(ctx.c, "nb")) === k, "the kernel id changed");
  }, { fixture: "none" });
}

// tests/test_use_notebook_already_connected.py
{
  const F = "test_use_notebook_already_connected.py";
  test(`${F}::test_the_reply_names_the_backend`, async ({ c }, assert) => {
    const first = structured(await c.call("list_notebooks")).items.find((x) => x.Name === "default").Kernel_ID;
    const reply = await c.useNotebook("default", "notebook.ipynb");
    assert(reply.includes(first), `the reply does not name kernel ${first}: ${reply}`);
    assert(!reply.includes("DO NOT"), reply);
  });
  test(`${F}::test_a_passed_kernel_id_is_declared_ignored`, async ({ c }, assert) => {
    const reply = await c.useNotebook("default", "notebook.ipynb", "connect", "4304d6ec");
    assert(reply.includes("not applied"), reply);
    assert(reply.includes("use_sandbox"), reply);
  });
}

// tests/test_use_notebook_create_local.py and
// tests/test_use_notebook_create_overwrite_repro.py
{
  test("test_use_notebook_create_local.py::test_create_passes_the_skeleton_to_the_contents_manager", async ({ c, jup }, assert) => {
    const r = await c.call("use_notebook", { notebook_name: "nb", notebook_path: "nb.ipynb", mode: "create" });
    assert(!r.isError, extractText(r));
    const file = jup.readNotebook("nb.ipynb");
    assert(file.cells.length > 0 && file.cells[0].cell_type === "markdown", `the created notebook has no markdown first cell: ${JSON.stringify(file.cells)}`);
  }, { fixture: "none" });
  test("test_use_notebook_create_local.py::test_create_writes_the_notebook_before_starting_a_session_on_it", async ({ c, jup }, assert) => {
    const r = await c.call("use_notebook", { notebook_name: "nb", notebook_path: "nb.ipynb", mode: "create" });
    assert(!r.isError, extractText(r));
    const sessions = await jup.api("GET", "/api/sessions");
    const s = sessions.find((x) => x.path === "nb.ipynb");
    assert(s, `no Jupyter session for nb.ipynb: ${JSON.stringify(sessions.map((x) => x.path))}`);
    const m = await jup.api("GET", "/api/contents/nb.ipynb?content=0");
    assert(m.type === "notebook", JSON.stringify(m));
  }, { fixture: "none" });
  test("test_use_notebook_create_local.py::test_create_starts_the_kernel_in_the_notebook_directory", async ({ c, jup }, assert) => {
    jup.writeNotebook("projects/demo/keep.ipynb", nb([]));
    const r = await c.call("use_notebook", { notebook_name: "nested", notebook_path: "projects/demo/notebook.ipynb", mode: "create" });
    assert(!r.isError, extractText(r));
    const cwd = await c.executeCode("import os; print(os.getcwd())");
    assert(joined(cwd.result).trim().endsWith("/projects/demo"), pyStr(cwd.result));
  }, { fixture: "none" });
  test("test_use_notebook_create_overwrite_repro.py::test_create_mode_overwrites_an_existing_notebook_on_real_contents_manager", async ({ c, jup }, assert) => {
    jup.writeNotebook("analysis.ipynb", nb([code("df = load_customer_data()  # 3 hours of work")]));
    await c.call("use_notebook", { notebook_name: "analysis_second_client", notebook_path: "analysis.ipynb", mode: "create" });
    const onDisk = fileSources(jup.readNotebook("analysis.ipynb"));
    assert(onDisk[0] === "df = load_customer_data()  # 3 hours of work", `use_notebook(create) overwrote an existing notebook: ${JSON.stringify(onDisk)}`);
  }, { fixture: "none" });
}

// tests/test_code_sandbox_notebook_cwd.py and
// tests/test_execute_cell_kernel_start_path.py: kernels start in the
// notebook's directory, a replacement one too.
{
  const open = async ({ c, jup }) => {
    jup.writeNotebook("sub/dir/nb.ipynb", nb([code("import os; print(os.getcwd())")]));
    const r = await c.call("use_notebook", { notebook_name: "nb", notebook_path: "sub/dir/nb.ipynb" });
    if (r.isError) throw new Error(extractText(r));
  };
  const cwdOf = async (c) => joined((await c.executeCell(0)).result).trim();
  test("test_code_sandbox_notebook_cwd.py::test_use_notebook_starts_the_kernel_in_the_notebook_directory", async (ctx, assert) => {
    await open(ctx);
    const cwd = await cwdOf(ctx.c);
    assert(cwd.endsWith("/sub/dir"), cwd);
  }, { fixture: "none" });
  const replaced = async (ctx, assert) => {
    await open(ctx);
    const k = structured(await ctx.c.call("list_notebooks")).items.find((x) => x.Name === "nb").Kernel_ID;
    await ctx.jup.api("DELETE", `/api/kernels/${k}`);
    await ctx.c.restartNotebook("nb");
    const cwd = await cwdOf(ctx.c);
    assert(cwd.endsWith("/sub/dir"), `replacement kernel runs in ${cwd}`);
  };
  test("test_code_sandbox_notebook_cwd.py::test_a_replacement_kernel_starts_in_the_current_notebooks_directory", replaced, { fixture: "none" });
  test("test_execute_cell_kernel_start_path.py::test_reprovisioned_kernel_uses_notebook_api_path_not_absolute_file_path", replaced, { fixture: "none" });
}

// tests/test_execute_cell_kernel_execution_count.py: the kernel's own count
// is what the cell gets, not the highest count in the file plus one.
test("test_execute_cell_kernel_execution_count.py::test_kernel_execution_count_wins_over_file_scan_after_restart", async ({ c, jup }, assert) => {
  const ran = code("x = 1", 5);
  jup.writeNotebook("count.ipynb", nb([ran, code("1")]));
  const r = await c.call("use_notebook", { notebook_name: "count", notebook_path: "count.ipynb" });
  assert(!r.isError, extractText(r));
  const ex = await c.call("execute_cell", { cell_index: 1, timeout: 120 });
  assert(!ex.isError, extractText(ex));
  const cell = jup.readNotebook("count.ipynb").cells[1];
  assert(cell.execution_count === 1, `execution_count ${cell.execution_count}`);
  assert(cell.outputs[0].execution_count === 1, JSON.stringify(cell.outputs));
}, { fixture: "none" });

// tests/test_execute_cell_output_fidelity.py: what execute_cell writes into
// the file keeps the kernel's output types and fields, and validates.
{
  const t = unit("test_execute_cell_output_fidelity.py");
  const runOne = async (ctx, source) => {
    await setUnitCells(ctx, [source]);
    const r = await ctx.c.call("execute_cell", { cell_index: 0, timeout: 120 });
    if (r.isError) throw new Error(`execute_cell: ${extractText(r)}`);
    return unitFile(ctx).cells[0];
  };
  const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
  const sources = {
    stream: "print('hello')",
    error: "1/0",
    execute_result: "1 + 1",
    display_data: `from IPython.display import display, Image\nimport base64\ndisplay(Image(data=base64.b64decode('${PNG}')))`,
  };
  for (const [param, source] of Object.entries(sources)) {
    t(`test_output_type_round_trips[${param}]`, async (ctx, assert) => {
      const cell = await runOne(ctx, source);
      assert(cell.outputs[0]?.output_type === param, JSON.stringify(cell.outputs));
      const bad = ctx.jup.validate("unit.ipynb");
      assert(!bad, `nbformat.validate: ${bad}`);
    });
  }
  t("test_error_output_keeps_its_fields", async (ctx, assert) => {
    const o = (await runOne(ctx, "1/0")).outputs[0];
    assert(o.output_type === "error" && o.ename === "ZeroDivisionError" && o.evalue === "division by zero", JSON.stringify(o));
    assert(Array.isArray(o.traceback) && o.traceback.length > 0, JSON.stringify(o.traceback));
  });
  t("test_stream_output_keeps_name_and_text", async (ctx, assert) => {
    const o = (await runOne(ctx, "import sys; print('oops', file=sys.stderr)")).outputs[0];
    const text = Array.isArray(o.text) ? o.text.join("") : o.text;
    assert(o.output_type === "stream" && o.name === "stderr" && text === "oops\n", JSON.stringify(o));
  });
  t("test_execute_result_execution_count_matches_cell", async (ctx, assert) => {
    const cell = await runOne(ctx, "1 + 1");
    assert(cell.execution_count !== null && cell.outputs[0].execution_count === cell.execution_count, JSON.stringify(cell));
  });
  t("test_multiple_outputs_keep_their_order_and_types", async (ctx, assert) => {
    const cell = await runOne(ctx, "print('hello')\n1/0");
    assert(JSON.stringify(cell.outputs.map((o) => o.output_type)) === JSON.stringify(["stream", "error"]), JSON.stringify(cell.outputs));
  });
  t("test_transient_field_is_stripped", async (ctx, assert) => {
    const cell = await runOne(ctx, `${sources.display_data.split("\ndisplay(")[0]}\ndisplay(Image(data=base64.b64decode('${PNG}')), display_id='abc')`);
    assert(cell.outputs.length > 0 && !("transient" in cell.outputs[0]), JSON.stringify(cell.outputs));
    const bad = ctx.jup.validate("unit.ipynb");
    assert(!bad, `nbformat.validate: ${bad}`);
  });
  t("test_no_output_sentinel_is_not_persisted", async (ctx, assert) => {
    const cell = await runOne(ctx, "x = 1");
    assert(cell.outputs.length === 0, JSON.stringify(cell.outputs));
    assert(Number.isInteger(cell.execution_count) && cell.execution_count >= 1, `execution_count ${cell.execution_count}`);
    const bad = ctx.jup.validate("unit.ipynb");
    assert(!bad, `nbformat.validate: ${bad}`);
  });
}

// tests/test_extract_output_fidelity.py: the text an output is read as.
{
  const t = unit("test_extract_output_fidelity.py");
  const first = async (c, source) => (await c.executeCode(source)).result[0];
  t("test_markdown_returns_source_not_repr", async ({ c }, assert) => {
    const v = await first(c, "from IPython.display import Markdown\nMarkdown('# hi')");
    assert(v === "# hi", JSON.stringify(v));
  });
  t("test_latex_returns_source_not_repr", async ({ c }, assert) => {
    const v = await first(c, "from IPython.display import Latex\nLatex('$x^2$')");
    assert(v === "$x^2$", JSON.stringify(v));
  });
  t("test_json_returns_payload_not_repr", async ({ c }, assert) => {
    const v = await first(c, "from IPython.display import JSON\nJSON({'a': 1, 'b': [2, 3]})");
    assert(typeof v === "string" && !v.includes("IPython"), JSON.stringify(v));
    let parsed = null;
    try {
      parsed = JSON.parse(v);
    } catch {
      // asserted below
    }
    assert(JSON.stringify(parsed) === JSON.stringify({ a: 1, b: [2, 3] }), JSON.stringify(v));
  });
  t("test_plain_only_output_unchanged", async ({ c }, assert) => {
    const v = await first(c, "42");
    assert(v === "42", JSON.stringify(v));
  });
  t("test_text_html_does_not_override_real_text_plain", async ({ c }, assert) => {
    const v = await first(c, "class T:\n    def _repr_html_(self): return '<table>...</table>'\n    def __repr__(self): return '   a\\n0  1'\nT()");
    assert(v === "   a\n0  1", JSON.stringify(v));
  });
  t("test_html_only_placeholder_unchanged", async ({ c }, assert) => {
    const v = await first(c, "from IPython.display import display\ndisplay({'text/html': '<b>bold</b>'}, raw=True)");
    assert(v === "[HTML Output]", JSON.stringify(v));
  });
}

// tests/test_execute_cell_stream.py and tests/test_execute_progress_keepalive.py:
// stream=True, and progress while a long cell runs.
{
  const t = unit("test_execute_cell_stream.py");
  t("test_stream_timeout_returns_partial_log", async (ctx, assert) => {
    await setUnitCells(ctx, ["import time; time.sleep(60)"]);
    const kid = structured(await ctx.c.call("list_notebooks")).items.find((x) => x.Name === "unit").Kernel_ID;
    try {
      const r = structured(await ctx.c.call("execute_cell", { cell_index: 0, timeout: 1, stream: true, progress_interval: 1 }));
      assert(Array.isArray(r.result), pyStr(r.result));
      assert(r.result.some((e) => typeof e === "string" && e.includes("[TIMEOUT at")), pyStr(r.result));
      await sleep(1000);
      const k = await ctx.jup.api("GET", `/api/kernels/${kid}`);
      assert(k.execution_state !== "busy", "the kernel was not interrupted");
    } finally {
      // A run left going would hold the kernel for a minute.
      await ctx.jup.api("POST", `/api/kernels/${kid}/interrupt`).catch(() => {});
      await sleep(1000);
    }
  });
  t("test_stream_preserves_image_output_on_terminal_drain", async (ctx, assert) => {
    await sleep(1000);
    await setUnitCells(ctx, ["%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()"]);
    const r = structured(await ctx.c.call("execute_cell", { cell_index: 0, timeout: 120, stream: true, progress_interval: 1 }));
    const images = r.result.filter((e) => typeof e !== "string");
    assert(images.length === 1 && images[0].mimeType === "image/png" && images[0].data.length > 0, pyStr(r.result).slice(0, 300));
    assert(!r.result.some((e) => typeof e === "string" && e.startsWith("[ERROR:")), pyStr(r.result));
  });
}
{
  const t = unit("test_execute_progress_keepalive.py");
  t("test_stream_path_emits_progress_callback_during_long_cell", async (ctx, assert) => {
    await setUnitCells(ctx, ["import time; time.sleep(2.2); print('hello')"]);
    const progress = [];
    const r = structured(await ctx.c.call("execute_cell", { cell_index: 0, timeout: 30, stream: true, progress_interval: 1 }, progress));
    assert(progress.length > 0, "expected at least one MCP progress keepalive event");
    assert(progress.every((p) => p.progress > 0), JSON.stringify(progress));
    assert(r.result.some((e) => typeof e === "string" && e.includes("[COMPLETED")), pyStr(r.result));
    assert(r.result.some((e) => typeof e === "string" && e.includes("[PROGRESS:")), pyStr(r.result));
  });
  t("test_forced_sync_path_emits_progress_callback_during_long_cell", async (ctx, assert) => {
    await setUnitCells(ctx, ["import time; time.sleep(2.2)"]);
    const progress = [];
    await ctx.c.call("execute_cell", { cell_index: 0, timeout: 30, stream: false, progress_interval: 1 }, progress);
    assert(progress.length > 0, "expected progress keepalive on the non-stream path");
    assert(progress[0].total === 30, `first progress: ${JSON.stringify(progress[0])}`);
  });
  t("test_execute_code_emits_progress_callback_during_long_run", async (ctx, assert) => {
    const progress = [];
    const r = await ctx.c.executeCode("import time; time.sleep(2); print('done')", 30, { progress_interval: 1 }, progress);
    assert(progress.length > 0, "expected progress keepalive from execute_code");
    assert(r.result.some((e) => typeof e === "string" && e.includes("done")), pyStr(r.result));
  });
}

// tests/test_execute_orphaned_timeout.py and
// tests/test_execute_code_orphaned_timeout.py: a run the call stopped waiting
// for is still running, and is seen to be.
{
  const t = unit("test_execute_orphaned_timeout.py");
  t("test_streaming_timeout_leaves_kernel_marked_busy_until_thread_finishes", async (ctx, assert) => {
    await setUnitCells(ctx, ["import time; time.sleep(3)"]);
    await ctx.c.call("execute_cell", { cell_index: 0, timeout: 1, stream: true });
    const kid = structured(await ctx.c.call("list_notebooks")).items.find((x) => x.Name === "unit").Kernel_ID;
    const state = async () => structured(await ctx.c.call("list_kernels")).items.find((k) => k.ID === kid)?.State;
    assert((await state()) === "busy", `kernel state right after the timeout: ${await state()}`);
    await sleep(3500);
    assert((await state()) === "idle", `kernel state after the run: ${await state()}`);
  });
  t("test_forced_sync_timeout_leaves_kernel_marked_busy_until_thread_finishes", async (ctx, assert) => {
    await setUnitCells(ctx, ["import time; time.sleep(3)"]);
    await ctx.c.call("execute_cell", { cell_index: 0, timeout: 1, stream: false });
    const kid = structured(await ctx.c.call("list_notebooks")).items.find((x) => x.Name === "unit").Kernel_ID;
    const state = async () => structured(await ctx.c.call("list_kernels")).items.find((k) => k.ID === kid)?.State;
    assert((await state()) === "busy", `kernel state right after the timeout: ${await state()}`);
    await sleep(3500);
    assert((await state()) === "idle", `kernel state after the run: ${await state()}`);
  });
  t("test_wait_for_kernel_idle_blocks_until_orphaned_stream_task_finishes", async (ctx, assert) => {
    await setUnitCells(ctx, ["import time; time.sleep(3); print('first')", "print('second')"]);
    await ctx.c.call("execute_cell", { cell_index: 0, timeout: 1, stream: true });
    const t0 = Date.now();
    const r = structured(await ctx.c.call("execute_cell", { cell_index: 1, timeout: 30 }));
    assert(Date.now() - t0 >= 500, `the second run did not wait for the first (${Date.now() - t0} ms)`);
    assert(joined(r.result).includes("second"), pyStr(r.result));
    const first = unitFile(ctx).cells[0].outputs.map((o) => (Array.isArray(o.text) ? o.text.join("") : o.text)).join("");
    assert(first.includes("first"), `the first run's output: ${first}`);
  });
}
{
  const t = unit("test_execute_code_orphaned_timeout.py");
  const exact = async (ctx, assert) => {
    const r = await ctx.c.executeCode("import time; time.sleep(3)", 1);
    assert(JSON.stringify(r.result) === JSON.stringify(["[TIMEOUT ERROR: IPython execution exceeded 1 seconds and was interrupted]"]), pyStr(r.result));
  };
  t("test_execute_code_timeout_leaves_kernel_marked_busy_until_thread_finishes", exact);
  test("test_execute_code_orphaned_timeout.py::test_execute_code_timeout_leaves_kernel_marked_busy_until_thread_finishes[interrupt_on_timeout]", exact,
    { group: "test_execute_code_orphaned_timeout.py+interrupt", groupSetup: useUnit, flags: INTERRUPT });
  t("test_wait_for_kernel_idle_blocks_until_orphaned_execute_code_finishes", async (ctx, assert) => {
    await sleep(3000);
    await ctx.c.executeCode("import time; time.sleep(3)", 1);
    const t0 = Date.now();
    const r = await ctx.c.executeCode("print('after')", 30);
    assert(Date.now() - t0 >= 500, `the second run did not wait for the first (${Date.now() - t0} ms)`);
    assert(joined(r.result).includes("after"), pyStr(r.result));
  });
}

// tests/test_execute_code_kernel_id.py and
// tests/test_execute_code_borrowed_kernel_stop_race.py: execute_code on a
// kernel named by id, with no notebook of its own.
{
  const F = "test_execute_code_kernel_id.py";
  const setup = async ({ c, jup }) => {
    const raw = await jup.api("POST", "/api/kernels", { name: "python3" });
    const seed = async (marker, extra) => {
      for (let i = 0; i < 3; i++) {
        const r = await c.executeCode(`MARKER = ${JSON.stringify(marker)}\nprint('seeded')`, 60, extra);
        if (joined(r.result).includes("seeded")) return;
      }
      throw new Error(`seeding ${marker} failed`);
    };
    await seed("current-notebook-kernel", {});
    await seed("raw-kernel", { kernel_id: raw.id });
    return raw.id;
  };
  const t = (id, fn) => test(`${F}::${id}`, async (ctx, assert) => {
    const raw = await setup(ctx);
    try {
      await fn(ctx, assert, raw);
    } finally {
      await ctx.jup.api("DELETE", `/api/kernels/${raw}`).catch(() => {});
    }
  });
  t("test_execute_code_runs_in_the_requested_kernel", async ({ c }, assert, raw) => {
    const r = await c.executeCode("print(MARKER)", 30, { kernel_id: raw });
    assert(joined(r.result, "").includes("raw-kernel"), pyStr(r.result));
  });
  t("test_execute_code_leaves_the_targeted_kernel_running", async ({ c, jup }, assert, raw) => {
    await c.executeCode("print(MARKER)", 30, { kernel_id: raw });
    assert((await jup.api("GET", "/api/kernels")).some((k) => k.id === raw), "the kernel was shut down");
    const r = await c.executeCode("print(MARKER)", 30, { kernel_id: raw });
    assert(joined(r.result, "").includes("raw-kernel"), pyStr(r.result));
  });
  t("test_execute_code_without_kernel_id_uses_the_current_notebook", async ({ c }, assert) => {
    const r = await c.executeCode("print(MARKER)", 30);
    assert(joined(r.result, "").includes("current-notebook-kernel"), pyStr(r.result));
  });
  t("test_execute_code_reports_an_unknown_kernel_id", async ({ c }, assert) => {
    const r = await c.executeCode("print(MARKER)", 30, { kernel_id: "no-such-kernel" });
    const text = joined(r.result, "");
    assert(text.includes("no-such-kernel") && text.includes("not found"), text);
    assert(!text.includes("current-notebook-kernel"), text);
  });
  test("test_execute_code_borrowed_kernel_stop_race.py::test_borrowed_kernel_not_stopped_while_execution_task_pending", async ({ c, jup }, assert) => {
    const raw = await jup.api("POST", "/api/kernels", { name: "python3" });
    try {
      const r = await c.executeCode("import time; time.sleep(3); print('late')", 1, { kernel_id: raw.id });
      assert(joined(r.result).includes("TIMEOUT"), pyStr(r.result));
      await sleep(3000);
      assert((await jup.api("GET", "/api/kernels")).some((k) => k.id === raw.id), "the borrowed kernel was stopped");
      const again = await c.executeCode("print('still here')", 30, { kernel_id: raw.id });
      assert(joined(again.result).includes("still here"), pyStr(again.result));
    } finally {
      await jup.api("DELETE", `/api/kernels/${raw.id}`).catch(() => {});
    }
  });
}
