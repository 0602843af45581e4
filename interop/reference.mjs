#!/usr/bin/env node
// The reference's own test suite, ported: the MCP-level tests of
// datalayer/jupyter-mcp-server (tests/), and its unit tests whose effect a
// client can see, run against this server through the official TypeScript
// SDK client (which validates every structuredContent against the tool's
// outputSchema), over stdio or streamable HTTP, on a real Jupyter server.
//
// The cases are in reference-cases.mjs, written from the reference's tests
// (same calls, arguments and assertions; the logic is ours). The reference's
// client (tests/test_common.py) is refclient.mjs. reference-port.txt lists
// every case left out and every case expected to differ, each with its reason.
//
// The fixtures are the reference's: one Jupyter server for the whole run
// (its session fixture), rooted at a temp dir holding notebook.ipynb and
// new.ipynb; and, for every case, a fresh MCP server pointed at it (its
// function fixture, which starts the server with --document-id notebook.ipynb:
// here the first call of a case opens notebook.ipynb as "default", since this
// server takes no default document; the fixture files are written again
// before every case). Cases ported from unit tests share one MCP server per
// test file.
//
// Usage:
//   node reference.mjs --transport stdio|http [--bin PATH] [--only REGEX]
//                      [--no-expected]   (count raw passes: no case is expected to differ)
//
// Exit status: non-zero when a case fails that the list does not expect to
// differ, when a case expected to differ passes (the list went stale), or when
// a kernel or process is left behind.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RefClient, CALL_TIMEOUT_MS } from "./refclient.mjs";
import { CASES, FIXTURE_NOTEBOOKS } from "./reference-cases.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CASE_TIMEOUT_MS = 240_000;

function parseArgs(argv) {
  const o = { bin: process.env.JMS_BIN || resolve(here, "..", "bin", "jupyter-mcp-server"), transport: "stdio", expected: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--bin") o.bin = next();
    else if (a === "--transport") o.transport = next();
    else if (a === "--only") o.only = new RegExp(next());
    else if (a === "--no-expected") o.expected = false;
    else if (a === "-h" || a === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  if (o.transport !== "stdio" && o.transport !== "http") usage("--transport is stdio or http");
  return o;
}

function usage(err) {
  if (err) console.error(`reference.mjs: ${err}`);
  console.error("usage: node reference.mjs --transport stdio|http [--bin PATH] [--only REGEX] [--no-expected]");
  process.exit(err ? 2 : 0);
}

// readList reads reference-port.txt: "left-out" and "differs" lines, each a
// case id (* matches any text) and its reason.
function readList() {
  const entries = [];
  const text = readFileSync(join(here, "reference-port.txt"), "utf8");
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(left-out|differs)\s+(\S+)\s+(.+)$/.exec(line);
    if (!m) throw new Error(`reference-port.txt:${n + 1}: expected "left-out|differs CASE REASON"`);
    const [, kind, id, reason] = m;
    const transports = /\[(stdio|http) only\]/.exec(reason)?.[1];
    entries.push({ kind, id, reason, transports, line: n + 1 });
  }
  return entries;
}

// matches reports whether a case id matches a list pattern, where * is any text.
const matches = (pattern, id) => new RegExp("^" + pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$").test(id);

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// findPython is a Python that has jupyter_server, as the managed server finds one.
function findPython() {
  const tries = [process.env.JUPYTER_PYTHON, process.env.VIRTUAL_ENV && join(process.env.VIRTUAL_ENV, "bin", "python"), "python3", "/usr/bin/python3"].filter(Boolean);
  for (const p of tries) {
    const r = spawnSync(p, ["-c", "import jupyter_server, nbformat"], { stdio: "ignore" });
    if (r.status === 0) return p;
  }
  throw new Error(`no Python with jupyter_server and nbformat (tried ${tries.join(", ")}); set JUPYTER_PYTHON`);
}

// Jupyter is the session fixture: one jupyter-server for the run.
class Jupyter {
  static async start(root, python) {
    const port = await freePort();
    const token = randomBytes(16).toString("hex");
    const args = ["-m", "jupyter_server", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1", `--ServerApp.port=${port}`,
      "--ServerApp.port_retries=0", `--ServerApp.token=${token}`, `--ServerApp.root_dir=${root}`];
    const proc = spawn(python, args, { cwd: root, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: "1" } });
    let log = "";
    proc.stderr.on("data", (c) => { log = (log + c.toString()).slice(-20000); });
    const j = new Jupyter(proc, `http://127.0.0.1:${port}`, token, root, python);
    j.logTail = () => log;
    for (let i = 0; i < 240; i++) {
      if (proc.exitCode !== null) throw new Error(`jupyter-server exited (${proc.exitCode}):\n${log}`);
      try {
        const r = await fetch(`${j.url}/api/status`, { headers: j.headers() });
        if (r.ok) return j;
      } catch {
        // not up yet
      }
      await sleep(250);
    }
    proc.kill("SIGKILL");
    throw new Error(`jupyter-server did not answer within 60 s:\n${log}`);
  }

  constructor(proc, url, token, root, python) {
    Object.assign(this, { proc, url, token, root, python });
  }

  headers() {
    return { Authorization: `token ${this.token}` };
  }

  // api calls the Jupyter REST API and returns the decoded answer (null for 204).
  async api(method, path, body) {
    const r = await fetch(`${this.url}${path}`, {
      method, headers: { ...this.headers(), "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${method} ${path}: HTTP ${r.status} ${await r.text()}`);
    return r.status === 204 ? null : r.json();
  }

  // readNotebook reads a notebook file from the server's root on disk.
  readNotebook(path) {
    return JSON.parse(readFileSync(join(this.root, path), "utf8"));
  }

  writeNotebook(path, nb) {
    mkdirSync(dirname(join(this.root, path)), { recursive: true });
    writeFileSync(join(this.root, path), JSON.stringify(nb, null, 1) + "\n");
  }

  // validate runs nbformat.validate on a file, as the reference's tests do.
  validate(path) {
    const r = spawnSync(this.python, ["-c", "import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))", join(this.root, path)], { encoding: "utf8" });
    return r.status === 0 ? null : (r.stderr || "").trim().split("\n").slice(-3).join(" ");
  }

  async stop() {
    if (this.proc.exitCode !== null) return;
    this.proc.kill("SIGTERM");
    for (let i = 0; i < 80 && this.proc.exitCode === null; i++) await sleep(250);
    if (this.proc.exitCode === null) this.proc.kill("SIGKILL");
  }
}

// MCPServer is the function fixture: one jupyter-mcp-server and a client
// connected to it.
class MCPServer {
  static async start(opts, jup, flags) {
    const s = new MCPServer();
    s.stderr = [];
    const keep = (chunk) => {
      s.stderr.push(...chunk.toString().split("\n"));
      if (s.stderr.length > 300) s.stderr = s.stderr.slice(-300);
    };
    const env = { ...process.env, PYDEVD_DISABLE_FILE_VALIDATION: "1" };
    delete env.JUPYTER_URL;
    delete env.JUPYTER_TOKEN;
    delete env.MCP_TOKEN;
    const common = ["--start-new-code-sandbox", "false", "--jupyter-url", jup.url, "--jupyter-token", jup.token, "--watch-interval", "0", ...(flags || [])];
    if (opts.transport === "stdio") {
      // The reference's client config, then the server to use.
      const args = ["--transport", "stdio", ...common];
      s.transport = new StdioClientTransport({ command: opts.bin, args, env, cwd: jup.root, stderr: "pipe" });
      s.transport.stderr?.on("data", keep);
    } else {
      s.port = await freePort();
      s.url = `http://127.0.0.1:${s.port}/mcp`;
      s.token = (flags || []).includes("--no-auth-loopback-only") ? null : randomBytes(16).toString("hex");
      const args = ["--transport", "streamable-http", "--port", String(s.port), ...common];
      if (s.token && !(flags || []).includes("--mcp-token")) args.push("--mcp-token", s.token);
      if ((flags || []).includes("--mcp-token")) s.token = flags[flags.indexOf("--mcp-token") + 1];
      s.proc = spawn(opts.bin, args, { cwd: jup.root, env, stdio: ["ignore", "ignore", "pipe"] });
      s.proc.stderr.on("data", keep);
      let up = false;
      for (let i = 0; i < 240 && !up; i++) {
        if (s.proc.exitCode !== null) throw new Error(`the server exited (${s.proc.exitCode}):\n${s.stderr.slice(-40).join("\n")}`);
        try {
          await fetch(s.url, { signal: AbortSignal.timeout(2000) });
          up = true;
        } catch {
          await sleep(250);
        }
      }
      if (!up) throw new Error("the HTTP server did not answer within 60 s");
      const headers = s.token ? { Authorization: `Bearer ${s.token}` } : {};
      s.transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers } });
    }
    s.client = new Client({ name: "reference-port", version: "1.0.0" });
    await s.client.connect(s.transport, { timeout: CALL_TIMEOUT_MS });
    return s;
  }

  async stop() {
    await this.client?.close().catch(() => {});
    if (this.proc && this.proc.exitCode === null) {
      this.proc.kill("SIGTERM");
      for (let i = 0; i < 80 && this.proc.exitCode === null; i++) await sleep(250);
      if (this.proc.exitCode === null) {
        this.proc.kill("SIGKILL");
        throw new Error("the HTTP server ignored SIGTERM for 20 s");
      }
    }
    // The stdio transport's close ends the child; give it time to stop its kernels.
    const pid = this.transport?.pid;
    if (pid) {
      for (let i = 0; i < 80; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await sleep(250);
      }
      throw new Error(`the stdio server (pid ${pid}) did not exit within 20 s of its stdin closing`);
    }
  }
}

// Context is what a case gets: the reference's client, the raw SDK client,
// the Jupyter fixture and helpers.
function context(server, jup, opts) {
  const calls = [];
  const c = new RefClient(server.client, (name, args, r, err) => {
    calls.push({ name, args, r, err });
    if (calls.length > 40) calls.shift();
  });
  return { c, client: server.client, server, jup, transport: opts.transport, calls };
}

// An assertion that failed, with what it was about.
class AssertionFailed extends Error {}

export function assert(cond, msg = "assertion failed") {
  if (!cond) throw new AssertionFailed(msg);
}

// openDefault stands for the reference's --document-id notebook.ipynb: the
// notebook its fixture server starts on, as "default".
async function openDefault(ctx) {
  const r = await ctx.c.call("use_notebook", { notebook_name: "default", notebook_path: "notebook.ipynb" });
  if (r.isError) throw new Error(`fixture: use_notebook default notebook.ipynb failed: ${short(r.content)}`);
}

// writeFixtures makes the Jupyter root hold the fixture notebooks only, as
// they are at the start, so that no case sees another's files.
function writeFixtures(jup) {
  for (const name of readdirSync(jup.root)) rmSync(join(jup.root, name), { recursive: true, force: true });
  for (const [path, nb] of Object.entries(FIXTURE_NOTEBOOKS)) jup.writeNotebook(path, nb);
}

async function withTimeout(p, ms, what) {
  let t;
  const timeout = new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${what} did not finish within ${ms / 1000} s`)), ms); });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(t);
  }
}

function short(v, n = 600) {
  const s = typeof v === "string" ? v
    : JSON.stringify(v, (k, x) => (k === "data" && typeof x === "string" && x.length > 64 ? `<${x.length} base64 chars>` : x));
  return s && s.length > n ? `${s.slice(0, n)}...` : s;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const list = readList();
  // Every left-out line names something not in CASES, and no case is both.
  for (const e of list.filter((x) => x.kind === "left-out" && !x.transports)) {
    const both = CASES.filter((k) => matches(e.id, k.id));
    if (both.length) throw new Error(`reference-port.txt:${e.line}: ${e.id} is left out but ported (${both.map((k) => k.id).join(", ")})`);
  }
  for (const e of list.filter((x) => x.kind === "differs")) {
    if (!CASES.some((k) => matches(e.id, k.id))) throw new Error(`reference-port.txt:${e.line}: ${e.id} is expected to differ but no ported case has that id`);
  }
  const selected = CASES.filter((k) => !opts.only || opts.only.test(k.id));
  const python = findPython();
  const root = mkdtempSync(join(tmpdir(), "jms-reference-"));
  console.log(`--- the reference's test suite over ${opts.transport}: ${selected.length} ported cases; Jupyter rooted at ${root}`);
  const jup = await Jupyter.start(root, python);

  const results = { pass: [], fail: [], xfail: [], xpass: [], na: [] };
  let hygiene = true;
  try {
    // Cases of one group (a unit-test file) share one server; the others
    // each get their own.
    const runs = [];
    for (const k of selected) {
      const last = runs[runs.length - 1];
      if (k.group && last && last.group === k.group) last.cases.push(k);
      else runs.push({ group: k.group, cases: [k] });
    }
    for (const run of runs) {
      const cases = run.cases.filter((k) => {
        const leftOut = list.find((e) => e.kind === "left-out" && e.transports && e.transports !== opts.transport && matches(e.id, k.id));
        if ((k.transports && !k.transports.includes(opts.transport)) || leftOut) {
          results.na.push(k.id);
          return false;
        }
        return true;
      });
      if (cases.length === 0) continue;
      writeFixtures(jup);
      let server = null;
      let setupErr = null;
      try {
        server = await withTimeout(MCPServer.start(opts, jup, cases[0].flags), 120_000, "starting the MCP server");
      } catch (e) {
        setupErr = e;
      }
      const ctx = server && context(server, jup, opts);
      if (server && run.group && !setupErr) {
        try {
          if (cases[0].fixture !== "none") await openDefault(ctx);
          if (cases[0].groupSetup) await withTimeout(cases[0].groupSetup(ctx), CASE_TIMEOUT_MS, "the group's setup");
        } catch (e) {
          setupErr = e;
        }
      }
      const failedBefore = results.fail.length;
      for (const k of cases) {
        const expect = opts.expected ? list.find((e) => e.kind === "differs" && matches(e.id, k.id) && (!e.transports || e.transports === opts.transport)) : null;
        let err = setupErr;
        const t0 = Date.now();
        if (!err) {
          try {
            if (!run.group && k.fixture !== "none") await openDefault(ctx);
            await withTimeout(k.fn(ctx, assert), CASE_TIMEOUT_MS, k.id);
          } catch (e) {
            err = e;
          }
        }
        const took = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
        if (!err && !expect) {
          results.pass.push(k.id);
          console.log(`PASS   ${k.id} (${took})`);
        } else if (!err && expect) {
          results.xpass.push(k.id);
          console.log(`XPASS  ${k.id} (${took}): passes, but reference-port.txt:${expect.line} expects it to differ (${expect.reason})`);
        } else {
          const why = err instanceof AssertionFailed ? err.message : (err.stack || err.message);
          if (expect) {
            results.xfail.push(k.id);
            console.log(`DIFFERS ${k.id} (${took}): as expected (reference-port.txt:${expect.line}); it failed with: ${short(why, 300)}`);
          } else {
            results.fail.push(k.id);
            console.log(`FAIL   ${k.id} (${took}): ${short(why, 2000)}`);
            if (ctx) {
              for (const x of ctx.calls.slice(-4)) console.log(`         ${x.name} ${short(x.args, 200)} -> ${x.err ? "throws " + x.err.message : short({ isError: x.r?.isError, content: x.r?.content, structuredContent: x.r?.structuredContent }, 700)}`);
            }
          }
        }
      }
      if (server) {
        try {
          await server.stop();
        } catch (e) {
          hygiene = false;
          console.log(`FAIL   leftovers: ${e.message}`);
        }
        if (results.fail.length > failedBefore && server.stderr.length) {
          const tail = server.stderr.filter((l) => l.trim()).slice(-6);
          if (tail.length) console.log(`         server stderr: ${tail.join(" | ").slice(0, 800)}`);
        }
      }
    }
    // What each server started, it stopped: no kernel or Jupyter session left.
    for (let i = 0; i < 40; i++) {
      const ks = await jup.api("GET", "/api/kernels");
      if (ks.length === 0) break;
      if (i === 39) {
        hygiene = false;
        console.log(`FAIL   leftovers: kernels still running on the Jupyter server after every MCP server stopped: ${ks.map((k) => k.id).join(", ")}`);
      }
      await sleep(250);
    }
  } finally {
    await jup.stop();
    rmSync(root, { recursive: true, force: true });
  }
  const ran = results.pass.length + results.fail.length + results.xfail.length + results.xpass.length;
  console.log(`reference port over ${opts.transport}: ${results.pass.length} of ${ran} passed, ${results.fail.length} failed` +
    (opts.expected ? `, ${results.xfail.length} differ as listed, ${results.xpass.length} listed but passing` : "") +
    `; ${results.na.length} not run on ${opts.transport}; ${list.filter((e) => e.kind === "left-out" && !e.transports).length} left out (reference-port.txt)`);
  if (results.fail.length) console.log(`failed: ${results.fail.join(" ")}`);
  process.exit(results.fail.length || results.xpass.length || !hygiene ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
