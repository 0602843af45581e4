"""Times `1+1` round trips to a kernel straight over ZeroMQ.

The Go benchmark (bench_test.go) runs this with the kernel's connection
file and alternates with it: for each line it reads on stdin, it runs one
execute_request, waits for both the execute_reply and the iopub idle
status for it, and prints the elapsed time in microseconds.

Mode "client" (default) uses jupyter_client's BlockingKernelClient, what a
Python tool would use; mode "raw" drives pyzmq sockets with a
jupyter_client Session directly, the floor for any client.
"""
import json
import sys
import time

import zmq
from jupyter_client import BlockingKernelClient
from jupyter_client.session import Session


def client_rounds(conn_file):
    kc = BlockingKernelClient(connection_file=conn_file)
    kc.load_connection_file()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)

    def one():
        msg_id = kc.execute("1+1", store_history=False)
        while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
            pass
        while True:
            msg = kc.get_iopub_msg(timeout=30)
            if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle"):
                return

    return one


def raw_rounds(conn_file):
    with open(conn_file) as f:
        info = json.load(f)
    session = Session(key=info["key"].encode(), signature_scheme=info["signature_scheme"])
    ctx = zmq.Context.instance()
    url = "%s://%s:" % (info["transport"], info["ip"])
    shell = ctx.socket(zmq.DEALER)
    shell.setsockopt(zmq.IDENTITY, session.bsession)
    shell.connect(url + str(info["shell_port"]))
    iopub = ctx.socket(zmq.SUB)
    iopub.setsockopt(zmq.SUBSCRIBE, b"")
    iopub.connect(url + str(info["iopub_port"]))

    def recv(sock, timeout_ms=30000):
        if not sock.poll(timeout_ms):
            raise TimeoutError("no message from the kernel in %d ms" % timeout_ms)
        _, parts = session.feed_identities(sock.recv_multipart())
        return session.deserialize(parts)

    # A SUB socket misses what is published before its subscription
    # reaches the kernel: ask for kernel_info until iopub answers.
    for _ in range(100):
        session.send(shell, "kernel_info_request", {})
        recv(shell)
        try:
            recv(iopub, 200)
            break
        except TimeoutError:
            continue
    while iopub.poll(100):
        iopub.recv_multipart()

    def one():
        msg = session.send(shell, "execute_request", {
            "code": "1+1", "silent": False, "store_history": False,
            "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
        msg_id = msg["header"]["msg_id"]
        while recv(shell)["parent_header"].get("msg_id") != msg_id:
            pass
        while True:
            m = recv(iopub)
            if (m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle"):
                return

    return one


def main():
    mode = sys.argv[2] if len(sys.argv) > 2 else "client"
    one = raw_rounds(sys.argv[1]) if mode == "raw" else client_rounds(sys.argv[1])
    one()  # the first round also waits for iopub to connect
    print("ready", flush=True)
    for _ in sys.stdin:
        t0 = time.perf_counter()
        one()
        print(int((time.perf_counter() - t0) * 1e6), flush=True)


if __name__ == "__main__":
    main()
