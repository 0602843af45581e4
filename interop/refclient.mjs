// The reference's test client, ported: what datalayer/jupyter-mcp-server's
// tests/test_common.py MCPClient does with each answer, written again here so
// that the ported cases read every result the way the reference's own tests
// (and the clients they stand for) read it.
//
// Its rules, which decide what "passes":
//   - text of a result: when every content item is text and there are several,
//     the JSON list of their texts (Python's json.dumps, so non-ASCII is
//     escaped); with one, its text.
//   - structured answer: structuredContent when present, else the text parsed
//     as JSON (wrapped under "result" unless it already looks like an answer),
//     else as a Python literal, else the text itself under "result".
//   - a "safe" call is null when the call failed (an exception, such as an
//     output schema mismatch the SDK refuses), or its text says "Error
//     executing tool", "is out of range" or "not found", or its structured
//     result (or the first entry of it) says "[ERROR:", "is out of range" or
//     "not found". An isError result is NOT null by itself: the reference's
//     client does not look at isError.

// CALL_TIMEOUT_MS bounds one call; progress resets it. A kernel start on a busy
// two-core machine can take a while.
export const CALL_TIMEOUT_MS = 180_000;

// pyTruthy is Python's truth value of a decoded JSON value.
export function pyTruthy(v) {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

function pyQuote(s) {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === "\\") out += "\\\\";
    else if (ch === q) out += "\\" + q;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else out += ch;
  }
  return out + q;
}

// pyRepr is Python's repr() of a decoded JSON value.
export function pyRepr(v) {
  if (typeof v === "string") return pyQuote(v);
  return pyStr(v);
}

// pyStr is Python's str() of a decoded JSON value.
export function pyStr(v) {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return v;
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(v);
  if (Array.isArray(v)) return "[" + v.map(pyRepr).join(", ") + "]";
  return "{" + Object.entries(v).map(([k, x]) => `${pyQuote(k)}: ${pyRepr(x)}`).join(", ") + "}";
}

// pyJSONDumps is json.dumps of a list of strings (ensure_ascii, ", ").
export function pyJSONDumps(list) {
  const esc = (s) => {
    let out = '"';
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      const ch = s[i];
      if (ch === '"') out += '\\"';
      else if (ch === "\\") out += "\\\\";
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else if (ch === "\b") out += "\\b";
      else if (ch === "\f") out += "\\f";
      else if (c < 0x20 || c > 0x7e) out += "\\u" + c.toString(16).padStart(4, "0");
      else out += ch;
    }
    return out + '"';
  };
  return "[" + list.map(esc).join(", ") + "]";
}

// pyLiteral is ast.literal_eval for the literals an answer could be (None,
// booleans, numbers, quoted strings, lists and tuples of them); it throws on
// anything else, as literal_eval raises.
export function pyLiteral(text) {
  let i = 0;
  const s = text.trim();
  const ws = () => { while (i < s.length && /\s/.test(s[i])) i++; };
  const value = () => {
    ws();
    if (s.startsWith("None", i)) { i += 4; return null; }
    if (s.startsWith("True", i)) { i += 4; return true; }
    if (s.startsWith("False", i)) { i += 5; return false; }
    const q = s[i];
    if (q === "'" || q === '"') {
      i++;
      let out = "";
      while (i < s.length && s[i] !== q) {
        if (s[i] === "\\" && i + 1 < s.length) {
          const e = s[++i];
          out += { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' }[e] ?? "\\" + e;
        } else out += s[i];
        i++;
      }
      if (s[i] !== q) throw new SyntaxError("unterminated string");
      i++;
      return out;
    }
    if (q === "[" || q === "(") {
      const close = q === "[" ? "]" : ")";
      i++;
      const list = [];
      ws();
      while (s[i] !== close) {
        list.push(value());
        ws();
        if (s[i] === ",") { i++; ws(); } else if (s[i] !== close) throw new SyntaxError("expected , or " + close);
      }
      i++;
      return list;
    }
    const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(s.slice(i));
    if (m) { i += m[0].length; return Number(m[0]); }
    throw new SyntaxError("not a literal");
  };
  const v = value();
  ws();
  if (i !== s.length) throw new SyntaxError("trailing text");
  return v;
}

// extractText is MCPClient._extract_text_content.
export function extractText(result) {
  const content = result?.content;
  if (Array.isArray(content) && content.length > 0) {
    if (content.every((c) => c.type === "text")) {
      if (content.length > 1) return pyJSONDumps(content.map((c) => c.text));
      return content[0].text;
    }
  }
  return null;
}

// structured is MCPClient._get_structured_content_safe.
export function structured(result) {
  const sc = result?.structuredContent;
  if (sc !== undefined && sc !== null) return sc;
  const text = extractText(result);
  if (text) {
    let parsed;
    let ok = true;
    try {
      parsed = JSON.parse(text);
    } catch {
      ok = false;
    }
    if (ok) {
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        if ("result" in parsed) return parsed;
        if (["index", "type", "source", "cells"].some((k) => k in parsed)) return parsed;
        return { result: parsed };
      }
      return { result: parsed };
    }
    try {
      return { result: pyLiteral(text) };
    } catch {
      return { result: text };
    }
  }
  const list = [];
  for (const item of result?.content || []) {
    if (item.type === "image") list.push({ type: "image", data: item.data, mimeType: item.mimeType, annotations: item.annotations ?? null, meta: item._meta ?? null });
    else if (item.type === "text") list.push(item.text);
  }
  return list.length > 0 ? { result: list } : null;
}

const TEXT_ERRORS = ["Error executing tool", "is out of range", "not found"];
const RESULT_ERRORS = ["[ERROR:", "is out of range", "not found"];

// RefClient is MCPClient over an MCP SDK client that is already connected.
export class RefClient {
  constructor(client, log = () => {}) {
    this.client = client;
    this.log = log;
  }

  // call is session.call_tool: failures throw, an isError result is returned.
  async call(name, args = {}, progress) {
    const r = await this.client.callTool({ name, arguments: args }, undefined, {
      timeout: CALL_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
      onprogress: progress ? (p) => progress.push(p) : undefined,
    });
    this.log(name, args, r);
    return r;
  }

  // safe is MCPClient._call_tool_safe.
  async safe(name, args = {}, progress) {
    let r;
    try {
      r = await this.call(name, args, progress);
    } catch (e) {
      this.log(name, args, null, e);
      return null;
    }
    const text = extractText(r);
    if (text && TEXT_ERRORS.some((m) => text.includes(m))) return null;
    const sc = structured(r);
    if (sc) {
      const v = sc.result;
      if (pyTruthy(v)) {
        let errText = "";
        if (typeof v === "string") errText = v;
        else if (Array.isArray(v) && v.length > 0) errText = pyStr(v[0]);
        if (errText && RESULT_ERRORS.some((m) => errText.includes(m))) return null;
      }
    }
    return r;
  }

  async listTools() {
    return this.client.listTools();
  }

  async useNotebook(name, path = null, mode = "connect", kernelID = null) {
    const args = { notebook_name: name, mode };
    if (path !== null) args.notebook_path = path;
    if (kernelID !== null) args.kernel_id = kernelID;
    return extractText(await this.call("use_notebook", args));
  }

  async listNotebooks() {
    return extractText(await this.call("list_notebooks"));
  }

  async restartNotebook(name) {
    return extractText(await this.call("restart_notebook", { notebook_name: name }));
  }

  async unuseNotebook(name) {
    return extractText(await this.call("unuse_notebook", { notebook_name: name }));
  }

  async readNotebook(name, responseFormat = "brief", startIndex = 0, limit = 20) {
    return extractText(await this.call("read_notebook", { notebook_name: name, response_format: responseFormat, start_index: startIndex, limit }));
  }

  async insertCell(index, type, source) {
    const r = await this.safe("insert_cell", { cell_index: index, cell_type: type, cell_source: source });
    return r ? structured(r) : null;
  }

  async insertExecuteCodeCell(index, source, timeout = 90) {
    const r = await this.safe("insert_execute_code_cell", { cell_index: index, cell_source: source, timeout });
    const sc = r ? structured(r) : null;
    if (sc && "result" in sc) {
      const v = sc.result;
      if (!Array.isArray(v)) sc.result = [v];
      else if (v.some((x) => x && typeof x === "object") && v.length > 0) {
        const first = v[0];
        if (Number.isInteger(first) || (typeof first === "string" && /^\d+$/.test(first))) sc.result = v.slice(1);
      }
    }
    return sc;
  }

  async readCell(index, includeOutputs = true) {
    const r = await this.safe("read_cell", { cell_index: index, include_outputs: includeOutputs });
    return r ? structured(r) : null;
  }

  async listKernels() {
    return extractText(await this.call("list_kernels"));
  }

  async launchSandbox(name, variant = "eval", timeout = 60) {
    const r = await this.safe("launch_sandbox", { sandbox_name: name, variant, timeout });
    return r ? structured(r) : null;
  }

  async listSandboxes() {
    const r = await this.safe("list_sandboxes");
    return r ? structured(r) : null;
  }

  async useSandbox(name = null) {
    const r = await this.safe("use_sandbox", name === null ? {} : { sandbox_name: name });
    return r ? extractText(r) : null;
  }

  async terminateSandbox(name) {
    const r = await this.safe("terminate_sandbox", { sandbox_name: name });
    return r ? extractText(r) : null;
  }

  async moveCell(source, target) {
    const r = await this.safe("move_cell", { source_index: source, target_index: target });
    return r ? structured(r) : null;
  }

  async deleteCell(indices, includeSource = true) {
    const r = await this.safe("delete_cell", { cell_indices: indices, include_source: includeSource });
    return r ? structured(r) : null;
  }

  // executeCell sends what the reference's client sends: timeout_seconds (a
  // name the tool does not declare; the reference's server ignores it and
  // uses its default) and stream false.
  async executeCell(index, timeoutSeconds = 300, stream = false, progressInterval = 5, progress) {
    const r = await this.safe("execute_cell", { cell_index: index, timeout_seconds: timeoutSeconds, stream, progress_interval: progressInterval }, progress);
    const sc = r ? structured(r) : null;
    if (sc && "result" in sc && !Array.isArray(sc.result)) sc.result = [sc.result];
    return sc;
  }

  async overwriteCellSource(index, source) {
    const r = await this.safe("overwrite_cell_source", { cell_index: index, cell_source: source });
    return r ? structured(r) : null;
  }

  async editCellSource(index, oldString, newString, replaceAll = false) {
    const r = await this.safe("edit_cell_source", { cell_index: index, old_string: oldString, new_string: newString, replace_all: replaceAll });
    return r ? structured(r) : null;
  }

  async executeCode(code, timeout = 60, extra = {}, progress) {
    const r = await this.call("execute_code", { code, timeout, ...extra }, progress);
    const sc = structured(r);
    if (sc && "result" in sc && !Array.isArray(sc.result)) sc.result = [sc.result];
    return sc;
  }

  async jupyterCite(prompt, cellIndices, notebookName = "") {
    const p = await this.client.getPrompt({ name: "jupyter_cite", arguments: { prompt, cell_indices: cellIndices, notebook_name: notebookName } });
    return p.messages.map((m) => m.content.text);
  }
}
