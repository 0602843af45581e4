#!/usr/bin/env node
// Long runs as tasks on 2025-11-25 through the TypeScript SDK 1.32.2's
// experimental tasks client (SEP-1686: client.experimental.tasks), against
// the binary over stdio (spawned) or streamable HTTP: the server advertises
// tasks and execution.taskSupport, a 20 s cell polled to its result, a held
// execution asked through tasks/result, tasks/cancel interrupting a
// time.sleep(60) within 2 s, tasks/list, a new client process (HTTP) that
// gets its result by id, and a call without a task answered plainly.
//
// Usage: node tasks.mjs (--bin PATH | --http URL --token T)
//
// The server must hold executions for approval (--approve execute; over
// HTTP also --trust-client-approval): the person at the client allows them.
// Exits non-zero if a check failed.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { waitGone } from "./procs.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const version = JSON.parse(readFileSync(join(here, "node_modules/@modelcontextprotocol/sdk/package.json"), "utf8")).version;
const opts = { bin: resolve(here, "..", "bin", "jupyter-mcp-server"), http: "", token: "" };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const k = argv[i].replace(/^--/, "");
  if (!(k in opts) || i + 1 >= argv.length) {
    console.error("usage: node tasks.mjs (--bin PATH | --http URL --token T)");
    process.exit(2);
  }
  opts[k] = k === "bin" ? resolve(argv[i + 1]) : argv[i + 1];
}
const transport = opts.http ? "http" : "stdio";
const textOf = (r) => (r?.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const assert = (ok, msg) => { if (!ok) throw new Error(msg); };

let asked = 0;
let root = "";
async function connect() {
  const client = new Client({ name: "interop-ts-tasks", version }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked++;
    return { action: "accept", content: { decision: "allow" } };
  });
  let t;
  if (opts.http) {
    t = new StreamableHTTPClientTransport(new URL(opts.http), { requestInit: { headers: { Authorization: `Bearer ${opts.token}` } } });
  } else {
    const env = { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: "1" };
    for (const k of ["JUPYTER_URL", "JUPYTER_TOKEN", "APPROVE", "APPROVE_TIMEOUT", "MCP_FEED", "TRANSPORT"]) delete env[k];
    root = mkdtempSync(join(tmpdir(), "jms-tasks-"));
    t = new StdioClientTransport({
      command: opts.bin, cwd: root, env, stderr: "inherit",
      args: ["--transport", "stdio", "--start-new-code-sandbox", "false", "--approve", "execute", "--feed", "off"],
    });
  }
  await client.connect(t);
  await client.listTools(); // the client caches execution.taskSupport from it
  return client;
}

const results = [];
async function check(name, f) {
  const t0 = Date.now();
  try {
    const detail = await f();
    results.push({ name, ok: true });
    console.log(`PASS  ${name} (${Date.now() - t0} ms)${detail ? ": " + detail : ""}`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`FAIL  ${name}: ${e?.stack || e}`);
  }
}

// stream runs a tool as a task and returns what the stream showed.
async function stream(client, name, args, onCreated) {
  const seen = [];
  let result, taskId;
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { timeout: 120_000 })) {
    const s = m.type + (m.task ? ":" + m.task.status : "");
    if (seen.at(-1) !== s) seen.push(s);
    if (m.type === "taskCreated") {
      taskId = m.task.taskId;
      if (onCreated) await onCreated(m.task);
    }
    if (m.type === "result") result = m.result;
    if (m.type === "error") return { seen, error: m.error, taskId };
  }
  return { seen, result, taskId };
}

const client = await connect();
const where = `ts sdk ${version} over ${transport}`;
const nb = `tasks-${Date.now()}`;

await check(`${where}: capabilities.tasks and execution.taskSupport`, async () => {
  const caps = client.getServerCapabilities();
  assert(caps.tasks?.requests?.tools?.call && caps.tasks.list && caps.tasks.cancel, JSON.stringify(caps.tasks));
  const tools = (await client.listTools()).tools;
  const marked = tools.filter((t) => t.execution?.taskSupport === "optional").map((t) => t.name).sort();
  assert(marked.join(",") === "execute_cell,execute_code,insert_execute_code_cell", marked.join(","));
  return marked.join(", ");
});

await check(`${where}: a plain call (no task) of a held execution`, async () => {
  const r = await client.callTool({ name: "use_notebook", arguments: { notebook_name: nb, notebook_path: `${nb}.ipynb`, mode: "create" } });
  assert(!r.isError, textOf(r));
  const before = asked;
  const res = await client.callTool({ name: "execute_code", arguments: { code: "print(6*7)" } }, undefined, { timeout: 60_000 });
  assert(!res.isError && textOf(res).includes("42") && asked === before + 1 && !res._meta?.["io.modelcontextprotocol/related-task"], JSON.stringify(res));
  return "asked by elicitation in the call, plain result";
});

await check(`${where}: a 20 s cell as a task, held, asked via tasks/result, polled to its result`, async () => {
  const before = asked;
  const { seen, result, error } = await stream(client, "insert_execute_code_cell", {
    cell_index: -1, timeout: 60, progress_interval: 1,
    cell_source: "import time\nfor i in range(20):\n    print('line', i, flush=True)\n    time.sleep(1)",
  });
  assert(!error, String(error));
  const text = textOf(result);
  assert(seen[0] === "taskCreated:working" && seen.includes("taskStatus:input_required") && seen.at(-1) === "result", seen.join(" "));
  assert(text.includes("line 0") && text.includes("line 19") && result._meta?.["io.jupyter-mcp/cell_id"] && result.structuredContent, JSON.stringify(result).slice(0, 400));
  assert(result._meta?.["io.modelcontextprotocol/related-task"]?.taskId, "no related-task in the result");
  assert(asked === before + 1, `asked ${asked - before} times`);
  return seen.join(" ");
});

await check(`${where}: tasks/cancel interrupts time.sleep(60) within 2 s; tasks/list`, async () => {
  let took = 0, status = "";
  const { seen, error } = await stream(client, "execute_code", { code: "import time\ntime.sleep(60)", timeout: 90 }, async (task) => {
    // Wait until the person allowed it and the kernel runs it.
    for (let i = 0; i < 100; i++) {
      const t = await client.experimental.tasks.getTask(task.taskId);
      if (t.status === "working" && (t.statusMessage || "").startsWith("Execution in progress")) break;
      await sleep(100);
    }
    const t0 = Date.now();
    const c = await client.experimental.tasks.cancelTask(task.taskId);
    took = Date.now() - t0;
    status = c.status;
  });
  assert(status === "cancelled" && took < 2000, `cancel answered ${status} after ${took} ms`);
  const list = await client.experimental.tasks.listTasks();
  assert(list.tasks.length >= 2 && list.tasks.some((t) => t.status === "cancelled"), JSON.stringify(list));
  const next = await client.callTool({ name: "execute_code", arguments: { code: "print('next')" } }, undefined, { timeout: 60_000 });
  assert(textOf(next).includes("next"), textOf(next));
  return `cancelled in ${took} ms (${seen.join(" ")}); list has ${list.tasks.length}; the kernel runs the next call`;
});

if (opts.http) {
  await check(`${where}: a new client process gets a task's result by id`, async () => {
    const first = client.experimental.tasks.callToolStream({ name: "execute_code", arguments: { code: "import time\ntime.sleep(3)\nprint('survived')", timeout: 60 } });
    const created = (await first.next()).value;
    assert(created.type === "taskCreated", JSON.stringify(created));
    await first.return();
    await client.close();
    // Another process: a child node that connects as the same client.
    const { execFileSync } = await import("node:child_process");
    const script = join(mkdtempSync(join(tmpdir(), "jms-tasks-child-")), "child.mjs");
    writeFileSync(script, `
      import { Client } from ${JSON.stringify(join(here, "node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js"))};
      import { StreamableHTTPClientTransport } from ${JSON.stringify(join(here, "node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js"))};
      import { CallToolResultSchema, ElicitRequestSchema } from ${JSON.stringify(join(here, "node_modules/@modelcontextprotocol/sdk/dist/esm/types.js"))};
      const c = new Client({ name: "interop-ts-tasks", version: ${JSON.stringify(version)} }, { capabilities: { elicitation: {} } });
      c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { decision: "allow" } }));
      await c.connect(new StreamableHTTPClientTransport(new URL(${JSON.stringify(opts.http)}), { requestInit: { headers: { Authorization: "Bearer ${opts.token}" } } }));
      const r = await c.experimental.tasks.getTaskResult(${JSON.stringify(created.task.taskId)}, CallToolResultSchema, { timeout: 60000 });
      const other = new Client({ name: "someone-else", version: "1" }, {});
      await other.connect(new StreamableHTTPClientTransport(new URL(${JSON.stringify(opts.http)}), { requestInit: { headers: { Authorization: "Bearer ${opts.token}" } } }));
      let refused = "";
      try { await other.experimental.tasks.getTask(${JSON.stringify(created.task.taskId)}); } catch (e) { refused = String(e.message); }
      console.log(JSON.stringify({ text: (r.content || []).map((c) => c.text).join(""), refused }));
      await c.close(); await other.close();
    `);
    let out;
    try {
      out = JSON.parse(execFileSync("node", [script], { encoding: "utf8" }).trim().split("\n").at(-1));
    } finally {
      rmSync(dirname(script), { recursive: true, force: true });
    }
    assert(out.text.includes("survived"), JSON.stringify(out));
    assert(out.refused.includes("no task"), "another client's tasks/get: " + out.refused);
    return "survived; another client is refused";
  });
} else {
  await client.close();
}

if (root) {
  const left = await waitGone(root, 15_000);
  if (left.length) {
    results.push({ ok: false });
    console.log(`FAIL  processes left behind in ${root}: ${left.join(" ")}`);
  }
  rmSync(root, { recursive: true, force: true });
}
const failed = results.filter((r) => !r.ok).length;
console.log(`tasks (${where}): ${results.length - failed}/${results.length} checks passed`);
process.exitCode = failed ? 1 : 0;
