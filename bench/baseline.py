"""The jupyter_client baseline for `make bench`.

The Go program starts this once and keeps it: every line on stdin is one
JSON request, every line on stdout one JSON answer. A persistent process
lets the baseline alternate with our server in the same run (rounds of N
calls each), and it times its own calls with perf_counter, so process start
and the pipe to Go are not counted against the baseline.

Requests:
  {"cmd": "connect", "connection_file": PATH}
  {"cmd": "run", "n": N, "code": CODE, "want": "text" | "png"}
      -> {"us": [microseconds per call]}

One call is what a Python tool would do with BlockingKernelClient: send an
execute_request with jupyter_client's defaults (history stored, as our
server's execute_code does too, so the kernel does the same work) and wait for both its execute_reply (shell) and the iopub
idle status for it, collecting the outputs on the way. "want" says which
output must have arrived, so a broken baseline fails loudly instead of
timing nothing.
"""
import json
import sys
import time
from queue import Empty

from jupyter_client import BlockingKernelClient


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def drain(kc):
    # Our server runs its calls on the same kernel between our rounds, and
    # the kernel publishes their iopub messages to every subscriber: skip
    # that backlog before the clock starts.
    while True:
        try:
            kc.get_iopub_msg(timeout=0.05)
        except Empty:
            return


def one(kc, code, want):
    msg_id = kc.execute(code)
    # The reply and the outputs travel on different sockets; ZeroMQ queues
    # both, so waiting for the reply first and then reading iopub up to the
    # idle status loses nothing.
    while True:
        msg = kc.get_shell_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id:
            break
    if msg["content"].get("status") != "ok":
        raise RuntimeError("execution failed: %r" % msg["content"])
    seen = False
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        data = msg["content"].get("data", {})
        if want == "text" and kind == "execute_result" and "text/plain" in data:
            seen = True
        elif want == "png" and kind in ("display_data", "execute_result") and "image/png" in data:
            seen = True
        elif kind == "status" and msg["content"]["execution_state"] == "idle":
            break
    if not seen:
        raise RuntimeError("no %s output arrived for %r" % (want, code))


def main():
    kc = None
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["cmd"] == "connect":
                kc = BlockingKernelClient(connection_file=req["connection_file"])
                kc.load_connection_file()
                kc.start_channels()
                # A kernel still starting on a loaded machine misses the
                # heartbeat wait_for_ready checks and is taken for dead:
                # ask again before giving up.
                for attempt in range(10):
                    try:
                        kc.wait_for_ready(timeout=60)
                        break
                    except RuntimeError:
                        if attempt == 9:
                            raise
                        time.sleep(1)
                answer({"ok": True})
            elif req["cmd"] == "run":
                drain(kc)
                us = []
                for _ in range(req["n"]):
                    t0 = time.perf_counter()
                    one(kc, req["code"], req["want"])
                    us.append(int((time.perf_counter() - t0) * 1e6))
                answer({"us": us})
            else:
                answer({"error": "unknown command %r" % req["cmd"]})
        except Exception as exc:  # the Go side reports it and stops
            answer({"error": "%s: %s" % (type(exc).__name__, exc)})


if __name__ == "__main__":
    main()
