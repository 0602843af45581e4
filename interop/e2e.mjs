#!/usr/bin/env node
// End-to-end check of jupyter-mcp-server through the official MCP TypeScript SDK
// client. The SDK's callTool validates every structuredContent against the tool's
// declared outputSchema, so a shape that drifts from the schema fails here even if
// our own Go tests agree with themselves.
//
// Usage:
//   node e2e.mjs [--bin PATH]                 stdio, spawned exactly as the reference's
//                                             client config does; managed Jupyter in a
//                                             temp dir, or JUPYTER_URL/JUPYTER_TOKEN
//   node e2e.mjs --http URL --token T         a running streamable HTTP endpoint
//
// Prints one line per check and exits non-zero if any check failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { waitGone } from "./procs.mjs";

const here = dirname(fileURLToPath(import.meta.url));

const EXPECTED_TOOLS = [
  "clear_cell_output", "connect_to_jupyter", "delete_cell", "edit_cell_source",
  "execute_cell", "execute_code", "insert_cell", "insert_execute_code_cell",
  "launch_sandbox", "list_files", "list_kernels", "list_notebooks", "list_sandboxes",
  "move_cell", "overwrite_cell_source", "read_cell", "read_notebook", "restart_notebook",
  "terminate_sandbox", "unuse_notebook", "use_notebook", "use_sandbox",
];
const CELL_ID = "io.jupyter-mcp/cell_id";
const CACHE = "io.modelcontextprotocol/cache";
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
// Starting a kernel and importing matplotlib can take a while on a busy two-core
// machine; the SDK's 60 s default would turn slowness into a false failure.
const CALL_TIMEOUT_MS = 180_000;

function parseArgs(argv) {
  const opts = { bin: process.env.JMS_BIN || resolve(here, "..", "bin", "jupyter-mcp-server") };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--bin") opts.bin = next();
    else if (a === "--http") opts.http = next();
    else if (a === "--token") opts.token = next();
    else if (a === "-h" || a === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  return opts;
}

function usage(err) {
  if (err) console.error(`e2e.mjs: ${err}`);
  console.error("usage: node e2e.mjs [--bin PATH] | --http URL [--token T]");
  process.exit(err ? 2 : 0);
}

let failures = 0;
let passes = 0;
function check(name, ok, detail = "") {
  if (ok) passes++;
  else failures++;
  console.log(`${ok ? "PASS" : "FAIL"}  ${name}${detail ? `  (${detail})` : ""}`);
  return ok;
}

// short renders a value for a check's detail, with image data reduced to its length.
function short(v, n = 300) {
  const s = typeof v === "string" ? v
    : JSON.stringify(v, (k, x) => (k === "data" && typeof x === "string" && x.length > 64 ? `<${x.length} base64 chars>` : x));
  return s && s.length > n ? `${s.slice(0, n)}...` : s;
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

// call runs one tool through the SDK (which validates structuredContent against the
// tool's outputSchema) and checks it succeeded with the expected kind. It returns the
// result, or null when the call failed, so later steps can skip what depends on it.
async function call(client, name, args, kind, progress = []) {
  let result;
  try {
    result = await client.callTool({ name, arguments: args }, undefined, {
      timeout: CALL_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p),
    });
  } catch (e) {
    check(`${name}: call succeeds and structuredContent matches its outputSchema`, false, e.message);
    return null;
  }
  if (result.isError) {
    check(`${name}: call succeeds`, false, short(textOf(result)));
    return null;
  }
  const sc = result.structuredContent;
  check(`${name}: structuredContent.kind == ${kind}`, sc && sc.kind === kind, `got ${short(sc && sc.kind)}`);
  // Text is never dropped: a client that ignores structuredContent sees only content.
  check(`${name}: content is not empty`, (result.content || []).length > 0);
  return result;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let transport;
  let rootDir = null;
  let stderrTail = [];

  if (opts.http) {
    const headers = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(opts.http), { requestInit: { headers } });
    console.log(`--- e2e over streamable HTTP: ${opts.http}`);
  } else {
    // The reference's client config: exactly these arguments, nothing else.
    const args = ["--transport", "stdio", "--start-new-code-sandbox", "false"];
    const env = { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: "1" };
    let cwd;
    if (process.env.JUPYTER_URL) {
      args.push("--jupyter-url", process.env.JUPYTER_URL);
      if (process.env.JUPYTER_TOKEN) args.push("--jupyter-token", process.env.JUPYTER_TOKEN);
      console.log(`--- e2e over stdio, Jupyter at ${process.env.JUPYTER_URL}`);
    } else {
      // Managed Jupyter is rooted at the working directory, as a user's client would
      // start it; a temp dir keeps the test's notebooks out of the tree.
      rootDir = mkdtempSync(join(tmpdir(), "jms-e2e-"));
      cwd = rootDir;
      delete env.JUPYTER_URL;
      delete env.JUPYTER_TOKEN;
      console.log(`--- e2e over stdio, managed Jupyter rooted at ${rootDir}`);
    }
    console.log(`    spawn: ${opts.bin} ${args.join(" ").replace(/(--jupyter-token )\S+/, "$1***")}`);
    transport = new StdioClientTransport({ command: opts.bin, args, env, cwd, stderr: "pipe" });
    transport.stderr?.on("data", (chunk) => {
      stderrTail.push(...chunk.toString().split("\n"));
      if (stderrTail.length > 200) stderrTail = stderrTail.slice(-200);
    });
  }

  const client = new Client({ name: "jupyter-mcp-interop-e2e", version: "1.0.0" });
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
    check("initialize", true, `server ${short(client.getServerVersion())}`);
    await scenario(client);
  } catch (e) {
    check("session", false, e.stack || e.message);
  } finally {
    await client.close().catch(() => {});
    if (rootDir) {
      const left = await waitGone(rootDir, 15_000);
      check("shutdown: no managed Jupyter server or kernel left running", left.length === 0,
        left.map((p) => `${p}: ${readCmd(p)}`).join("; "));
      rmSync(rootDir, { recursive: true, force: true });
    }
    if (failures > 0 && stderrTail.length > 0) {
      console.log("--- last lines of the server's stderr:");
      console.log(stderrTail.slice(-60).join("\n"));
    }
  }
  console.log(`e2e: ${passes} passed, ${failures} failed`);
  process.exit(failures > 0 ? 1 : 0);
}

// readCmd names a left-over process in the failure message.
function readCmd(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`).toString().replaceAll("\0", " ").trim();
  } catch {
    return "?";
  }
}

async function scenario(client) {
  // Tools: all 22, each advertising an output schema.
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check("tools/list: 22 tools", tools.length === 22, `got ${tools.length}`);
  const missing = EXPECTED_TOOLS.filter((n) => !names.includes(n));
  check("tools/list: every tool of the reference is there", missing.length === 0, `missing ${missing.join(", ")}`);
  const noSchema = tools.filter((t) => !t.outputSchema || t.outputSchema.type !== "object").map((t) => t.name);
  check("tools/list: every tool has an object outputSchema", noSchema.length === 0, `without: ${noSchema.join(", ")}`);

  const { prompts } = await client.listPrompts();
  check("prompts/list: jupyter_cite", prompts.some((p) => p.name === "jupyter_cite"), short(prompts.map((p) => p.name)));

  const nbName = "e2e";
  const nbPath = `e2e-${process.pid}-${Date.now()}.ipynb`;
  const use = await call(client, "use_notebook", { notebook_name: nbName, notebook_path: nbPath, mode: "create" }, "notebook.use");
  if (!use) return;

  // Insert at 0 so the index is known whatever a fresh notebook starts with.
  const ins = await call(client, "insert_cell", { cell_index: 0, cell_type: "code", cell_source: "x = 40\nprint(x + 1)" }, "cell.insert");
  const insId = ins?._meta?.[CELL_ID];
  if (ins) check("insert_cell: _meta carries the cell id", typeof insId === "string" && insId.length > 0, short(ins._meta));

  const read = await call(client, "read_cell", { cell_index: 0 }, "cell.read");
  if (!read) return;
  const cellId = read._meta?.[CELL_ID];
  check("read_cell: _meta carries the cell id", typeof cellId === "string" && cellId.length > 0, short(read._meta));
  if (insId) check("read_cell: same cell id as insert_cell reported", cellId === insId, `${insId} vs ${cellId}`);
  check("read_cell: shows the source", JSON.stringify(read.structuredContent).includes("x = 40"), short(read.structuredContent));
  check("read_cell: no cache hint on a cell read", !read._meta?.[CACHE], short(read._meta));
  if (!cellId) return;

  const edit = await call(client, "edit_cell_source", { cell_id: cellId, old_string: "x = 40", new_string: "x = 41" }, "cell.edit");
  if (edit) check("edit_cell_source: _meta cell id is the edited cell", edit._meta?.[CELL_ID] === cellId, short(edit._meta));

  const reread = await call(client, "read_cell", { cell_id: cellId }, "cell.read");
  if (reread) check("read_cell by id: the edit is there", JSON.stringify(reread.structuredContent).includes("x = 41"), short(reread.structuredContent));

  const exec = await call(client, "execute_cell", { cell_id: cellId, timeout: 120 }, "cell.execute");
  if (exec) {
    const sc = exec.structuredContent;
    check("execute_cell: output is 42", JSON.stringify(sc.outputs).includes("42"), short(sc.outputs));
    check("execute_cell: outputs, count and images agree", Array.isArray(sc.outputs) && sc.count === sc.outputs.length && sc.images === 0, short(sc));
    check("execute_cell: _meta cell id", exec._meta?.[CELL_ID] === cellId, short(exec._meta));
  }

  // A run longer than progress_interval reports progress, which the SDK delivers
  // to onprogress because it sent a progressToken.
  const progress = [];
  const slow = await call(client, "execute_code", { code: "import time; time.sleep(2.5); print('slept')", progress_interval: 1 }, "code.execute", progress);
  if (slow) {
    check("execute_code: output after the wait", JSON.stringify(slow.structuredContent.outputs).includes("slept"), short(slow.structuredContent));
    check("execute_code: progress notifications during a 2.5 s run (progress_interval 1)",
      progress.length >= 1 && progress.every((p) => typeof p.progress === "number"), short(progress));
  }

  const plotSrc = "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3]); plt.show()";
  const plot = await call(client, "insert_execute_code_cell", { cell_index: -1, cell_source: plotSrc, timeout: 150 }, "cell.insert_execute");
  let plotId;
  if (plot) {
    const sc = plot.structuredContent;
    check("insert_execute_code_cell: images == 1", sc.images === 1, `images=${sc.images}`);
    check("insert_execute_code_cell: count == outputs.length", Array.isArray(sc.outputs) && sc.count === sc.outputs.length, short(sc));
    const structImg = (sc.outputs || []).find((o) => o && typeof o === "object" && o.type === "image");
    check("insert_execute_code_cell: structured outputs hold the image as an object", structImg?.mimeType === "image/png", short(structImg));
    const img = (plot.content || []).find((c) => c.type === "image");
    check("insert_execute_code_cell: image content item with mimeType image/png", img?.mimeType === "image/png", short(img));
    if (img) {
      const bytes = Buffer.from(img.data, "base64");
      check("insert_execute_code_cell: image data is base64 of a PNG", bytes.length > 100 && bytes.subarray(0, 8).equals(PNG_MAGIC),
        `${bytes.length} bytes, header ${bytes.subarray(0, 8).toString("hex")}`);
    }
    plotId = plot._meta?.[CELL_ID];
    check("insert_execute_code_cell: _meta carries the new cell's id", typeof plotId === "string" && plotId.length > 0 && plotId !== cellId, short(plot._meta));
  }

  // The image output as a resource, with its own MIME type.
  if (plotId) {
    let found = null;
    for (let i = 0; i < 4 && !found; i++) {
      try {
        const r = await client.readResource({ uri: `notebook://${nbName}/cells/${plotId}/outputs/${i}` });
        found = (r.contents || []).find((c) => c.mimeType === "image/png" && c.blob);
      } catch {
        break;
      }
    }
    check("resources/read notebook://NAME/cells/ID/outputs/N: the plot as an image/png blob",
      !!found && Buffer.from(found.blob, "base64").subarray(0, 8).equals(PNG_MAGIC));
  }

  const list = await call(client, "list_notebooks", {}, "notebooks.list");
  if (list) {
    const sc = list.structuredContent;
    const cache = list._meta?.[CACHE];
    check("list_notebooks: _meta cache ttlMs == 30000", cache?.ttlMs === 30000, short(list._meta));
    check("list_notebooks: _meta cache scope private", cache?.cacheScope === "private", short(cache));
    check("list_notebooks: rows (columns, items, count)", Array.isArray(sc.columns) && sc.columns.length > 0 && Array.isArray(sc.items) && sc.count === sc.items.length && sc.count >= 1, short(sc));
    check("list_notebooks: every row is keyed by the header", (sc.items || []).every((it) => sc.columns.every((c) => c in it)), short(sc.items));
    check("list_notebooks: lists the notebook in use", JSON.stringify(sc.items).includes(nbName), short(sc.items));
  }

  const kernels = await call(client, "list_kernels", {}, "kernels.list");
  if (kernels) check("list_kernels: _meta cache ttlMs == 10000", kernels._meta?.[CACHE]?.ttlMs === 10000, short(kernels._meta));

  await call(client, "unuse_notebook", { notebook_name: nbName }, "notebook.unuse");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
