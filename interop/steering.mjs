#!/usr/bin/env node
// Steering through the official MCP TypeScript SDK client over stdio: the
// person approves held calls in their own MCP host (elicitation), and a
// subscribed client hears of changes to a notebook (resources/updated).
//
// Usage: node steering.mjs [--bin PATH]
//
// The server runs with --approve destructive and no workbench attached, on a
// managed Jupyter rooted at a temp dir. Prints one line per check and exits
// non-zero if any failed.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { waitGone } from "./procs.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CALL_TIMEOUT_MS = 180_000;

let bin = process.env.JMS_BIN || resolve(here, "..", "bin", "jupyter-mcp-server");
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--bin" && i + 1 < argv.length) bin = argv[++i];
  else {
    console.error("usage: node steering.mjs [--bin PATH]");
    process.exit(2);
  }
}

let failures = 0;
let passes = 0;
function check(name, ok, detail = "") {
  if (ok) passes++;
  else failures++;
  // What was seen is shown when a check fails; a pass needs no evidence.
  console.log(`${ok ? "PASS" : "FAIL"}  ${name}${!ok && detail ? `  (${detail})` : ""}`);
  return ok;
}

function short(v, n = 400) {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s && s.length > n ? `${s.slice(0, n)}...` : s;
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

function notebook(cells) {
  return JSON.stringify({
    cells: cells.map(([id, source]) => ({ cell_type: "code", id, metadata: {}, source, outputs: [], execution_count: null })),
    metadata: {}, nbformat: 4, nbformat_minor: 5,
  }, null, 1) + "\n";
}

// The person at the client: answer says what they do with the next request.
const person = { answer: "allow", reason: "", asked: [] };

async function main() {
  const rootDir = mkdtempSync(join(tmpdir(), "jms-steer-"));
  const args = ["--transport", "stdio", "--start-new-code-sandbox", "false", "--approve", "destructive"];
  const env = { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: "1" };
  for (const k of ["JUPYTER_URL", "JUPYTER_TOKEN", "APPROVE", "APPROVE_TIMEOUT", "MCP_FEED"]) delete env[k];
  console.log(`--- steering over stdio, managed Jupyter rooted at ${rootDir}`);
  const transport = new StdioClientTransport({ command: bin, args, env, cwd: rootDir, stderr: "pipe" });
  let stderrTail = [];
  transport.stderr?.on("data", (chunk) => {
    stderrTail.push(...chunk.toString().split("\n"));
    if (stderrTail.length > 200) stderrTail = stderrTail.slice(-200);
  });

  const client = new Client({ name: "steering-interop", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    person.asked.push(req.params);
    switch (person.answer) {
      case "allow":
        return { action: "accept", content: { decision: "allow" } };
      case "deny":
        return { action: "accept", content: { decision: "deny", reason: person.reason } };
      default:
        return { action: person.answer };
    }
  });
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
    check("initialize", true);
    await approvals(client, rootDir);
    await subscriptions(client, rootDir);
  } catch (e) {
    check("session", false, e.stack || e.message);
  } finally {
    await client.close().catch(() => {});
    const left = await waitGone(rootDir, 15_000);
    check("shutdown: no managed Jupyter server or kernel left running", left.length === 0, left.join(", "));
    rmSync(rootDir, { recursive: true, force: true });
    if (failures > 0 && stderrTail.length > 0) {
      console.log("--- last lines of the server's stderr:");
      console.log(stderrTail.slice(-60).join("\n"));
    }
  }
  console.log(`steering: ${passes} passed, ${failures} failed`);
  process.exit(failures > 0 ? 1 : 0);
}

async function callTool(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
}

// approvals: held destructive calls are put to the person through
// elicitation/create; allow runs them, a denial is an isError result
// carrying their reason.
async function approvals(client, rootDir) {
  const file = "steer.ipynb";
  writeFileSync(join(rootDir, file), notebook([["keep-a", "a = 1"], ["drop-b", "b = 2"], ["keep-c", "c = 3"]]));
  const onDisk = () => readFileSync(join(rootDir, file), "utf8");

  person.answer = "allow";
  const use = await callTool(client, "use_notebook", { notebook_name: "steer", notebook_path: file });
  check("use_notebook (held, allowed through elicitation) succeeds", !use.isError, short(textOf(use)));
  check("use_notebook: the person was asked once", person.asked.length === 1, `asked ${person.asked.length} times`);

  const del = await callTool(client, "delete_cell", { cell_ids_to_delete: ["drop-b"] });
  const q = person.asked.at(-1) || {};
  check("delete_cell: asked through elicitation/create", person.asked.length === 2, `asked ${person.asked.length} times`);
  console.log(`      the question: ${short(q.message, 600)}`);
  check("delete_cell: the question names the tool, the notebook and the cell",
    /delete_cell/.test(q.message) && /'steer' \(steer\.ipynb\)/.test(q.message) && /drop-b/.test(q.message), short(q.message));
  check("delete_cell: the question shows what it would do (the cell that would go, its source)",
    q.message?.includes("It would delete 1 of 3 cells.") && q.message?.includes("cell 1 (drop-b) would be deleted: b = 2"), short(q.message));
  check("delete_cell: the form offers allow / deny and a reason",
    JSON.stringify(q.requestedSchema?.properties?.decision?.enum) === '["allow","deny"]' && q.requestedSchema?.properties?.reason?.type === "string",
    short(q.requestedSchema));
  check("delete_cell allowed: succeeds", !del.isError, short(textOf(del)));
  check("delete_cell allowed: the cell is gone from the file", !onDisk().includes("b = 2") && onDisk().includes("a = 1"), short(onDisk()));

  person.answer = "deny";
  person.reason = "cell a loads the data; keep it";
  const denied = await callTool(client, "delete_cell", { cell_ids_to_delete: ["keep-a"] });
  check("delete_cell denied: isError", denied.isError === true, short(textOf(denied)));
  console.log(`      the agent reads: ${short(textOf(denied))}`);
  check("delete_cell denied: the text carries the person's reason",
    textOf(denied).includes("the person using steering-interop 1.0.0 declined this call: cell a loads the data; keep it"), short(textOf(denied)));
  check("delete_cell denied: the file still has the cell", onDisk().includes("a = 1"), short(onDisk()));

  person.answer = "decline";
  const declined = await callTool(client, "delete_cell", { cell_ids_to_delete: ["keep-c"] });
  check("delete_cell declined (the host's decline button): isError saying so",
    declined.isError === true && textOf(declined).includes("declined this call to delete_cell"), short(textOf(declined)));
  check("delete_cell declined: the file still has the cell", onDisk().includes("c = 3"), short(onDisk()));

  const asked = person.asked.length;
  const read = await callTool(client, "read_cell", { cell_id: "keep-a" });
  check("read_cell: not held, nobody asked", !read.isError && person.asked.length === asked, short(textOf(read)));
}

// subscriptions: a client subscribed to notebook://steer hears of a write to
// the file on disk (an editor, git) within 5 s, through the server's watch
// of notebooks in use (--watch-interval, 2 s by default), and the agent's
// next result on the notebook says which cells changed.
async function subscriptions(client, rootDir) {
  check("initialize: resources.subscribe advertised", client.getServerCapabilities()?.resources?.subscribe === true,
    short(client.getServerCapabilities()?.resources));
  const updated = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updated.push(n.params.uri); });
  await client.subscribeResource({ uri: "notebook://steer" });

  const path = join(rootDir, "steer.ipynb");
  const nb = JSON.parse(readFileSync(path, "utf8"));
  const cell = nb.cells.find((c) => c.id === "keep-a");
  cell.source = "a = 'edited outside'";
  writeFileSync(path, JSON.stringify(nb, null, 1) + "\n");
  const t0 = Date.now();
  while (!updated.includes("notebook://steer") && Date.now() - t0 < 30_000) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = Date.now() - t0;
  check("resources/updated for notebook://steer within 5 s of a write on disk", updated.includes("notebook://steer") && ms <= 5000,
    `after ${ms} ms, got ${short(updated)}`);
  console.log(`      resources/updated after ${ms} ms`);

  const read = await callTool(client, "read_cell", { cell_id: "keep-a" });
  const text = textOf(read);
  check("read_cell after the outside write: the new source", text.includes("edited outside"), short(text));
  check("read_cell after the outside write: a notice names the cell changed outside",
    /Note: notebook 'steer' \(steer\.ipynb\) was changed outside this server at \d\d:\d\d:\d\d UTC: cell 0 \(keep-a\) edited/.test(text), short(text));
  check("read_cell after the outside write: the notice in _meta io.jupyter-mcp/notices",
    Array.isArray(read._meta?.["io.jupyter-mcp/notices"]) && read._meta["io.jupyter-mcp/notices"].length === 1, short(read._meta));
  await client.unsubscribeResource({ uri: "notebook://steer" });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
