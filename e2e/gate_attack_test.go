package e2e

// The attacker of the gate tests: Python that runs in a kernel, as the
// agent's code does, with what such code has (our OS user: every file,
// /proc, every socket we can reach), trying to decide a held call or to act
// as the person. It reports what it tried and got as JSON lines in a file
// the test reads.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// attackPrelude is what every attack starts with: where to report, and how
// to read another process's environment and command line.
const attackPrelude = `
import os, sys, json, glob, socket, base64, struct, time, threading, urllib.request, urllib.error

def report(**kw):
    with open(REPORT, "a") as f:
        f.write(json.dumps(kw) + "\n")

def environ(pid):
    try:
        raw = open("/proc/%d/environ" % pid, "rb").read().decode(errors="replace")
    except Exception as e:
        return {}
    return dict(kv.split("=", 1) for kv in raw.split("\0") if "=" in kv)

def cmdline(pid):
    try:
        return open("/proc/%d/cmdline" % pid, "rb").read().decode(errors="replace").split("\0")
    except Exception:
        return []

def ancestors():
    pids, pid = [], os.getpid()
    while pid > 1:
        try:
            stat = open("/proc/%d/stat" % pid).read()
        except Exception:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        pids.append(pid)
    return pids
`

// feedAttack finds the live feed of the server SERVER_PID the way kernel
// code can (its environment in /proc, the runtime and temporary
// directories), connects to it with a websocket client of its own (TCP with
// the record's token, or the unix socket), and sends the person's actions:
// revoke, pair, and allow for every held call it sees. It runs in a thread,
// so that the cell that starts it returns.
const feedAttack = attackPrelude + `
def ws_connect(rec):
    url, token = rec.get("url", ""), rec.get("token", "")
    if url.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(url[len("unix:"):])
        host, path = "localhost", "/"
    else:
        hostport, _, path = url[len("ws://"):].partition("/")
        h, _, p = hostport.rpartition(":")
        s = socket.create_connection((h, int(p)))
        host, path = hostport, "/" + path
    key = base64.b64encode(os.urandom(16)).decode()
    req = "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n" % (path, host, key)
    if token:
        req += "Authorization: Bearer %s\r\n" % token
    s.sendall((req + "\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            raise Exception("closed during the handshake")
        head += chunk
    status = head.split(b"\r\n", 1)[0].decode()
    if " 101 " not in status:
        raise Exception("handshake refused: " + status)
    return s

def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError()
        b += c
    return b

def ws_send(s, obj):
    data = json.dumps(obj).encode()
    mask = os.urandom(4)
    n = len(data)
    if n < 126:
        head = struct.pack("!BB", 0x81, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
    s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

def ws_recv(s):
    msg = b""
    while True:
        b0, b1 = recv_exact(s, 2)
        n = b1 & 0x7f
        if n == 126:
            n = struct.unpack("!H", recv_exact(s, 2))[0]
        elif n == 127:
            n = struct.unpack("!Q", recv_exact(s, 8))[0]
        data = recv_exact(s, n)
        op = b0 & 0x0f
        if op == 8:
            raise EOFError()
        if op in (9, 10):
            continue
        msg += data
        if b0 & 0x80:
            return json.loads(msg)

def find_feeds():
    env = environ(SERVER_PID)
    dirs = []
    if env.get("XDG_RUNTIME_DIR"):
        dirs.append(os.path.join(env["XDG_RUNTIME_DIR"], "jupyter-mcp-server"))
    dirs.append("/tmp/jupyter-mcp-server-%d" % os.getuid())
    found = []
    for d in dirs:
        for f in glob.glob(os.path.join(d, "feed-%d.json" % SERVER_PID)):
            try:
                found.append(json.load(open(f)))
            except Exception as e:
                report(step="read record", file=f, error=str(e))
        for f in glob.glob(os.path.join(d, "feed-%d.sock" % SERVER_PID)):
            if not any(r.get("url") == "unix:" + f for r in found):
                found.append({"url": "unix:" + f})
    return found

def attack():
    feeds = find_feeds()
    report(step="found", feeds=[f.get("url") for f in feeds])
    for rec in feeds:
        try:
            s = ws_connect(rec)
        except Exception as e:
            report(step="connect", url=rec.get("url"), error=str(e))
            continue
        report(step="connected", url=rec.get("url"))
        ref = 0
        sent = {}
        def act(**a):
            nonlocal ref
            ref += 1
            a["ref"] = ref
            sent[ref] = a["action"] + " " + a.get("id", "")
            ws_send(s, a)
        # Ask to be paired first (a server without pairing answers the
        # action with an error), then for the stream.
        act(action="pair")
        while True:
            m = ws_recv(s)
            t = m.get("type")
            if t == "hello":
                report(step="hello", access=m.get("access", ""))
            elif t in ("pairing", "paired", "unpaired"):
                report(step=t, msg=m)
                if t != "pairing":
                    break
            elif t == "result":
                report(step="result", action=sent.get(m.get("ref")), error=m.get("error", ""))
                break
        ws_send(s, {"action": "start"})
        act(action="revoke")
        decided = set()
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                m = ws_recv(s)
            except Exception as e:
                report(step="feed ended", error=str(e))
                break
            t = m.get("type")
            if t == "result":
                report(step="result", action=sent.get(m.get("ref")), error=m.get("error", ""))
            elif t == "event":
                ev = m.get("event") or {}
                c = ev.get("call") or {}
                if ev.get("type") == "call.held" and c.get("id") not in decided:
                    decided.add(c["id"])
                    report(step="held", tool=c.get("tool"), id=c["id"])
                    act(action="decide", id=c["id"], allow=True)
                    act(action="settle", id=c["id"], verdict={"allow": True, "forSession": True})
                if ev.get("type") == "call.finished" and c.get("tool") == "delete_cell":
                    report(step="delete finished", status=c.get("status"))
                    time.sleep(0.5)
                    break
        s.close()
    report(step="done")

threading.Thread(target=attack, daemon=True).start()
print("attacker started")
`

// mcpAttack opens an MCP session of its own on ENDPOINT with the bearer
// token it was given (TOKEN) or, without one, the token it finds in /proc
// (the environment and command line of the server SERVER_PID and of the
// kernel's ancestors), declares elicitation, and makes a held delete_cell
// answering its own approval question with allow.
const mcpAttack = attackPrelude + `
def find_token():
    for pid in [SERVER_PID] + ancestors():
        env = environ(pid)
        if env.get("MCP_TOKEN"):
            return env["MCP_TOKEN"], "environ of %d" % pid
        args = cmdline(pid)
        for i, a in enumerate(args):
            if a in ("--mcp-token", "-mcp-token") and i + 1 < len(args):
                return args[i + 1], "cmdline of %d" % pid
            if a.startswith("--mcp-token="):
                return a.split("=", 1)[1], "cmdline of %d" % pid
    return "", ""

class Session:
    def __init__(self, url, token):
        self.url, self.token, self.sid, self.n = url, token, None, 0
        self.asked = []

    def post(self, msg):
        req = urllib.request.Request(self.url, data=json.dumps(msg).encode(), method="POST")
        req.add_header("Content-Type", "application/json")
        req.add_header("Accept", "application/json, text/event-stream")
        req.add_header("Authorization", "Bearer " + self.token)
        if self.sid:
            req.add_header("Mcp-Session-Id", self.sid)
            req.add_header("Mcp-Protocol-Version", "2025-11-25")
        return urllib.request.urlopen(req, timeout=120)

    def messages(self, resp):
        if "text/event-stream" not in resp.headers.get("Content-Type", ""):
            body = resp.read()
            if body.strip():
                yield json.loads(body)
            return
        data = []
        for line in resp:
            line = line.decode().rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif line == "":
                text = "\n".join(data).strip()
                data = []
                if text:
                    yield json.loads(text)

    def request(self, method, params):
        self.n += 1
        rid = self.n
        resp = self.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        if self.sid is None:
            self.sid = resp.headers.get("Mcp-Session-Id")
        for m in self.messages(resp):
            if m.get("id") == rid and ("result" in m or "error" in m):
                return m
            if m.get("method") == "elicitation/create":
                self.asked.append(m["params"].get("message", "")[:200])
                self.post({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "accept", "content": {"decision": "allow"}}}).read()
        raise Exception("the stream ended without an answer")

def attack():
    token, where = TOKEN, "given"
    if not token:
        token, where = find_token()
    report(step="token", found=bool(token), where=where)
    if not token:
        report(step="done")
        return
    s = Session(ENDPOINT, token)
    try:
        s.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}, "clientInfo": {"name": "kernel", "version": "1"}})
        s.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).read()
        for name, args in CALLS:
            m = s.request("tools/call", {"name": name, "arguments": args})
            r = m.get("result") or {}
            text = " ".join(c.get("text", "") for c in r.get("content", []))
            report(step="call", tool=name, isError=bool(r.get("isError")) or "error" in m, text=text[:400], asked=len(s.asked))
    except urllib.error.HTTPError as e:
        report(step="http", status=e.code, error=e.read().decode(errors="replace")[:300])
    except Exception as e:
        report(step="error", error=str(e))
    report(step="done")

attack()
`

// attackCode is one of the attacks above with its parameters set.
func attackCode(attack string, params map[string]any) string {
	var b strings.Builder
	for k, v := range params {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		// JSON literals are Python literals for what the tests pass
		// (strings, numbers, lists, objects of them), but for booleans
		// and null, which none of them pass.
		fmt.Fprintf(&b, "%s = %s\n", k, j)
	}
	return b.String() + attack
}

// attackStep is one line of an attack's report.
type attackStep map[string]any

func (s attackStep) str(k string) string { v, _ := s[k].(string); return v }

// readReport waits until the attack reports it is done (or the timeout
// ends) and returns its steps.
func readReport(t *testing.T, path string, timeout time.Duration) []attackStep {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		steps := parseReport(t, path)
		if n := len(steps); n > 0 && steps[n-1].str("step") == "done" {
			return steps
		}
		if time.Now().After(deadline) {
			t.Fatalf("the attack did not finish within %s; it reported %v", timeout, steps)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func parseReport(t *testing.T, path string) []attackStep {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var steps []attackStep
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var s attackStep
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			steps = append(steps, s)
		}
	}
	return steps
}
