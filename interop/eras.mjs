#!/usr/bin/env node
// Both protocol eras through the official TypeScript clients: the SDK
// @modelcontextprotocol/sdk 1.32.2 (2025-11-25) and the v2 client
// @modelcontextprotocol/client 2.4.0, whose default negotiation is the old
// handshake ('legacy') and which speaks 2026-07-28 with mode 'auto' (it
// probes server/discover) or pinned. The checks are goclient's: tools,
// approval allowed and denied by the person at the client, a subscription
// update, progress carrying output, and a cancel that interrupts the kernel.
//
// Usage: node eras.mjs --client v1|v2 [--mode legacy|auto|pin] (--bin PATH | --http URL --token T)
//
// The server must hold destructive calls for approval (--approve destructive;
// over HTTP also --trust-client-approval). Prints one line per check and a
// MATRIX line (run.sh collects them); exits non-zero if a check failed.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { waitGone } from "./procs.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const versionOf = (pkg) => JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;
const opts = { client: "v1", mode: "legacy", bin: resolve(here, "..", "bin", "jupyter-mcp-server"), http: "", token: "" };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const k = argv[i].replace(/^--/, "");
  if (!(k in opts) || i + 1 >= argv.length) {
    console.error("usage: node eras.mjs --client v1|v2 [--mode legacy|auto|pin] (--bin PATH | --http URL --token T)");
    process.exit(2);
  }
  opts[k] = k === "bin" ? resolve(argv[i + 1]) : argv[i + 1];
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const textOf = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
const cellIdOf = (r) => r._meta?.["io.jupyter-mcp/cell_id"];

// The person at the client: what they answer the next approval.
const person = { answer: "allow", asked: 0 };
function elicit(req) {
  person.asked++;
  return { action: "accept", content: { decision: person.answer, reason: "interop decline" } };
}
const updates = [];

async function connect() {
  const env = { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: "1" };
  for (const k of ["JUPYTER_URL", "JUPYTER_TOKEN", "APPROVE", "APPROVE_TIMEOUT", "MCP_FEED", "TRANSPORT"]) delete env[k];
  const args = ["--transport", "stdio", "--start-new-code-sandbox", "false", "--approve", "destructive", "--feed", "off"];
  const headers = { Authorization: `Bearer ${opts.token}` };
  let root = "";
  if (!opts.http) root = mkdtempSync(join(tmpdir(), "jms-eras-"));
  if (opts.client === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const { ElicitRequestSchema, ResourceUpdatedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const version = versionOf("@modelcontextprotocol/sdk");
    const client = new Client({ name: "interop-ts-sdk", version }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    const t = opts.http
      ? new StreamableHTTPClientTransport(new URL(opts.http), { requestInit: { headers } })
      : new StdioClientTransport({ command: opts.bin, args, env, cwd: root, stderr: "inherit" });
    // The SDK tells its transport the version initialize settled on.
    let era = "";
    const set = t.setProtocolVersion?.bind(t);
    t.setProtocolVersion = (v) => { era = v; set?.(v); };
    await client.connect(t);
    return {
      client, root, name: `ts sdk ${version}`, era,
      call: (name, a, o = {}) => client.callTool({ name, arguments: a }, undefined, { timeout: 180_000, ...o }),
      subscribe: async (uri) => { await client.subscribeResource({ uri }); return { how: "resources/subscribe", close: () => client.unsubscribeResource({ uri }) }; },
    };
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  const version = versionOf("@modelcontextprotocol/client");
  const mode = opts.mode === "pin" ? { pin: "2026-07-28" } : opts.mode;
  const client = new Client({ name: "interop-ts-client", version }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } });
  client.setRequestHandler("elicitation/create", async (req) => elicit(req));
  client.setNotificationHandler("notifications/resources/updated", (n) => updates.push(n.params.uri));
  const t = opts.http
    ? new StreamableHTTPClientTransport(new URL(opts.http), { requestInit: { headers } })
    : new StdioClientTransport({ command: opts.bin, args, env, cwd: root, stderr: "inherit" });
  await client.connect(t);
  return {
    client, root, name: `ts client ${version} ${opts.mode}`, era: client.getNegotiatedProtocolVersion(),
    call: (name, a, o = {}) => client.callTool({ name, arguments: a }, { timeout: 180_000, ...o }),
    subscribe: async (uri) => {
      if (client.getProtocolEra() === "legacy") {
        await client.subscribeResource({ uri });
        return { how: "resources/subscribe", close: () => client.unsubscribeResource({ uri }) };
      }
      const sub = await client.listen({ resourceSubscriptions: [uri] });
      return { how: "subscriptions/listen", close: () => sub.close() };
    },
  };
}

const c = await connect();
const transport = opts.http ? "http" : "stdio";
console.log(`--- ${c.name} over ${transport} speaks ${c.era}`);
const cells = [];
let failed = false;
async function check(name, f) {
  const t0 = Date.now();
  try {
    const detail = await f();
    cells.push("ok");
    console.log(`PASS  ${c.name} ${name} (${Date.now() - t0} ms): ${detail}`);
  } catch (e) {
    failed = true;
    cells.push("FAIL");
    console.log(`FAIL  ${c.name} ${name}: ${e && e.message || e}`);
  }
}
async function ok(name, a, o) {
  const r = await c.call(name, a, o);
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  return r;
}

const nb = `eras-${opts.client}-${opts.mode}-${Date.now() % 1e6}`;
let ran = "";
await check("tools", async () => {
  const { tools } = await c.client.listTools();
  await ok("use_notebook", { notebook_name: nb, notebook_path: `${nb}.ipynb`, mode: "create" });
  const r = await ok("insert_execute_code_cell", { cell_index: -1, cell_source: "print(6 * 7)", notebook_name: nb });
  if (!textOf(r).includes("42")) throw new Error(textOf(r));
  ran = cellIdOf(r);
  return `${tools.length} tools, a cell ran`;
});
await check("approve", async () => {
  const r = await ok("insert_cell", { cell_index: -1, cell_type: "code", cell_source: "# to delete", notebook_name: nb });
  const before = person.asked;
  await ok("delete_cell", { cell_ids_to_delete: [cellIdOf(r)], notebook_name: nb });
  if (person.asked === before) throw new Error("the person was not asked");
  return "asked, allowed, ran";
});
await check("decline", async () => {
  person.answer = "deny";
  try {
    const r = await c.call("delete_cell", { cell_ids_to_delete: [ran], notebook_name: nb });
    if (!r.isError || !textOf(r).includes("declined")) throw new Error(`a denied call answered ${textOf(r)}`);
  } finally {
    person.answer = "allow";
  }
  return "denied, not run";
});
await check("subscription", async () => {
  const uri = `notebook://${nb}/cells/${ran}`;
  const sub = await c.subscribe(uri);
  try {
    for (let i = 0; i < 30; i++) {
      await ok("overwrite_cell_source", { cell_id: ran, cell_source: `print(${i})`, notebook_name: nb });
      for (let j = 0; j < 10 && !updates.includes(uri); j++) await sleep(100);
      if (updates.includes(uri)) return `resources/updated for ${uri} (${sub.how})`;
    }
    throw new Error(`no resources/updated (got ${JSON.stringify(updates)})`);
  } finally {
    await sub.close();
  }
});
await check("progress", async () => {
  const msgs = [];
  await ok("insert_execute_code_cell", {
    cell_index: -1, notebook_name: nb, timeout: 60, progress_interval: 1,
    cell_source: "import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(1)",
  }, { onprogress: (p) => msgs.push(p.message || "") });
  for (let i = 0; i < 50 && !msgs.some((m) => m.includes("Latest output:\nline 0")); i++) await sleep(100);
  if (!msgs.some((m) => m.includes("Latest output:\nline 0"))) throw new Error(`progress: ${JSON.stringify(msgs)}`);
  return `${msgs.length} notifications, output lines in them`;
});
await check("cancel", async () => {
  const ac = new AbortController();
  const pending = c.call("insert_execute_code_cell", { cell_index: -1, notebook_name: nb, timeout: 120, cell_source: "import time\ntime.sleep(120)" }, { signal: ac.signal }).catch(() => {});
  await sleep(3000); // allowed, and in the sleep
  ac.abort();
  const cancelled = Date.now();
  await pending;
  const r = await ok("execute_code", { code: "print('after the cancel')", timeout: 20 });
  if (!textOf(r).includes("after the cancel")) throw new Error(`the kernel did not take the next code: ${textOf(r)}`);
  const took = Date.now() - cancelled;
  const listing = textOf(await ok("read_notebook", { notebook_name: nb, limit: 0 }));
  const last = listing.split("\n").length;
  for (let round = 0; round < 50; round++) {
    for (let i = last; i >= 0; i--) {
      const rc = await c.call("read_cell", { cell_index: i, notebook_name: nb });
      if (!rc.isError && textOf(rc).includes("time.sleep(120)")) {
        if (textOf(rc).includes("KeyboardInterrupt")) return `kernel interrupted: the next code ran ${took} ms after the cancel`;
        break;
      }
    }
    await sleep(200);
  }
  throw new Error("the cancelled cell has no KeyboardInterrupt");
});
await c.call("unuse_notebook", { notebook_name: nb }).catch(() => {});
await c.client.close();
if (c.root) {
  const left = await waitGone(c.root, 20_000);
  if (left.length) {
    failed = true;
    console.log(`FAIL  processes left running: ${left.join(" ")}`);
  }
  rmSync(c.root, { recursive: true, force: true });
}
console.log(["MATRIX", c.name, transport, c.era, ...cells].join("\t"));
process.exit(failed ? 1 : 0);
