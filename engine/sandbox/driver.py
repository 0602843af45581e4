# The eval sandbox's driver: a persistent Python interpreter that runs code
# sent by the Go server in one namespace, like a Jupyter kernel does.
#
# Protocol (one JSON object per line):
#   fd 3 (in):  {"id": N, "code": "..."}
#   fd 4 (out): {"type": "ready", "pid": ..., "python": "..."} once, then per
#               request: stream / execute_result / display_data / error
#               events carrying its id, and a final {"type": "done"}.
# The real stdin is /dev/null so that code calling input() cannot read the
# protocol; the real stdout/stderr are forwarded by the server as streams
# (output of subprocesses and C code lands there).

import ast
import base64
import io
import json
import linecache
import os
import signal
import sys
import threading
import traceback
import types

# The bootstrap that loaded this script already wraps fd 3 (it read the
# script from it); opening fd 3 again would lose what its buffer read ahead.
REQ = globals().get("REQ") or os.fdopen(3, "r", encoding="utf-8", newline="\n")
EVT = os.fdopen(4, "w", encoding="utf-8", newline="\n")
# Processes the user's code starts (os.system) must not inherit the protocol
# pipes: one left running would keep them open after this process died.
os.set_inheritable(3, False)
os.set_inheritable(4, False)
sys.argv = [""]
EVT_LOCK = threading.Lock()
# RAW_SYNC ends each request's raw output on fds 1 and 2 (see main); eval.go
# strips it. Record separators do not occur in ordinary text output.
RAW_SYNC = b"\x1ejms-raw-sync\x1e"
# RUN_LOCK orders stream events before the "done" of their request, so that
# the flusher thread never sends a request's output after its end.
RUN_LOCK = threading.RLock()

# SIGINT interrupts user code only: while the driver itself reads a request
# or writes an answer, an interrupt is ignored so that the protocol survives.
executing = False


def on_sigint(signum, frame):
    if executing:
        raise KeyboardInterrupt


signal.signal(signal.SIGINT, on_sigint)


def emit(obj):
    line = json.dumps(obj)
    with EVT_LOCK:
        EVT.write(line + "\n")
        EVT.flush()


current_id = None


class OutStream(io.TextIOBase):
    """sys.stdout / sys.stderr replacement that sends what is written as
    stream events: whole lines at once, and a pending partial line after a
    short delay (a background thread flushes), as ipykernel does."""

    def __init__(self, name):
        self.name = name
        self._buf = []
        self._lock = threading.Lock()

    def writable(self):
        return True

    @property
    def encoding(self):
        return "utf-8"

    def isatty(self):
        return False

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        if not s:
            return 0
        with self._lock:
            self._buf.append(s)
            newline = "\n" in s
        if newline:
            self.flush()
        return len(s)

    def flush(self):
        # Text written while no request runs (by a thread the user left
        # behind) waits for the next request rather than being lost.
        with RUN_LOCK:
            if current_id is None:
                return
            with self._lock:
                text = "".join(self._buf)
                self._buf = []
            if text:
                emit({"id": current_id, "type": "stream", "name": self.name, "text": text})


STDOUT = OutStream("stdout")
STDERR = OutStream("stderr")


def flusher():
    import time

    while True:
        time.sleep(0.05)
        try:
            STDOUT.flush()
            STDERR.flush()
        except Exception:
            pass


# The user's code runs in a fresh __main__ module, so that classes it defines
# pickle and so that "if __name__ == '__main__'" blocks run.
# The driver's own module stays referenced so that its globals live on.
DRIVER_MODULE = sys.modules["__main__"]
main_mod = types.ModuleType("__main__")
main_mod.__builtins__ = __builtins__
sys.modules["__main__"] = main_mod
NS = main_mod.__dict__
count = 0


def mime_bundle(value):
    """The execute_result data of a value: its repr, plus the richer
    representations IPython-aware objects offer."""
    data = {"text/plain": repr(value)}
    for meth, mime in (("_repr_html_", "text/html"), ("_repr_markdown_", "text/markdown"),
                       ("_repr_png_", "image/png"), ("_repr_svg_", "image/svg+xml")):
        f = getattr(value, meth, None)
        if f is None or isinstance(value, type):
            continue
        try:
            r = f()
        except Exception:
            continue
        if r is None:
            continue
        if isinstance(r, bytes):
            r = base64.b64encode(r).decode("ascii")
        if isinstance(r, str):
            data[mime] = r
    return data


def display(*objs):
    """A display() like IPython's: shows each object as display_data."""
    for obj in objs:
        STDOUT.flush()
        STDERR.flush()
        emit({"id": current_id, "type": "display_data", "data": mime_bundle(obj)})


NS["display"] = display


def show_figures():
    """Sends open matplotlib figures as PNG images and closes them, as the
    inline backend of a notebook does."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        nums = plt.get_fignums()
    except Exception:
        return
    for n in nums:
        try:
            buf = io.BytesIO()
            plt.figure(n).savefig(buf, format="png", bbox_inches="tight")
            png = base64.b64encode(buf.getvalue()).decode("ascii")
            emit({"id": current_id, "type": "display_data",
                  "data": {"image/png": png, "text/plain": "<Figure %d>" % n}})
        except Exception:
            pass
    try:
        plt.close("all")
    except Exception:
        pass


def report_error(exc, skip_frames):
    tb = exc.__traceback__
    for _ in range(skip_frames):
        if tb is not None:
            tb = tb.tb_next
    if isinstance(exc, SyntaxError):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        lines = traceback.format_exception(type(exc), exc, tb)
    STDOUT.flush()
    STDERR.flush()
    emit({"id": current_id, "type": "error", "ename": type(exc).__name__,
          "evalue": str(exc), "traceback": [l.rstrip("\n") for l in lines]})


def run(code):
    global executing, count
    count += 1
    filename = "<cell-%d>" % count
    # Registering the source lets tracebacks show the offending lines.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    status = "ok"
    try:
        try:
            tree = ast.parse(code, filename, "exec")
        except SyntaxError as e:
            report_error(e, 0)
            return "error"
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = compile(tree, filename, "exec")
        expr = compile(last, filename, "eval") if last is not None else None
        executing = True
        try:
            exec(body, NS)
            value = eval(expr, NS) if expr is not None else None
        finally:
            executing = False
        STDOUT.flush()
        STDERR.flush()
        if value is not None:
            NS["_"] = value
            emit({"id": current_id, "type": "execute_result", "count": count,
                  "data": mime_bundle(value)})
    except BaseException as e:  # KeyboardInterrupt and SystemExit included
        executing = False
        # One frame (this function's exec/eval line) is the driver's.
        report_error(e, 1)
        status = "error"
    finally:
        try:
            show_figures()
        except BaseException:
            pass
    return status


def main():
    global current_id
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.stdout = STDOUT
    sys.stderr = STDERR
    threading.Thread(target=flusher, daemon=True).start()
    emit({"type": "ready", "pid": os.getpid(), "python": sys.version.split()[0],
          "executable": sys.executable})
    while True:
        try:
            line = REQ.readline()
        except KeyboardInterrupt:
            continue
        if not line:
            return
        try:
            req = json.loads(line)
        except ValueError:
            continue
        with RUN_LOCK:
            current_id = req.get("id")
        status = "error"
        try:
            status = run(req.get("code", ""))
        except BaseException:
            pass
        with RUN_LOCK:
            try:
                STDOUT.flush()
                STDERR.flush()
            except BaseException:
                pass
            # Output that bypassed sys.stdout (subprocesses, C code) travels
            # on the real fds 1 and 2, which the server reads separately:
            # a marker at the end of each tells it when it has all of this
            # request's raw output, so none of it lands after "done".
            for fd in (1, 2):
                try:
                    os.write(fd, RAW_SYNC)
                except BaseException:
                    pass
            emit({"id": current_id, "type": "done", "status": status, "count": count})
            current_id = None


main()
