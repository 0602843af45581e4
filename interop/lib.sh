# shellcheck shell=bash
# Shared helpers of the interop scripts; sourced, not run.
#
# start_server starts jupyter-mcp-server on streamable HTTP on a free loopback
# port, waits until /mcp answers, and sets MCP_URL and SERVER_PID. The server
# runs a managed Jupyter rooted at a fresh temp dir, or uses JUPYTER_URL and
# JUPYTER_TOKEN when they are set. stop_server stops it and checks that nothing
# it started (managed Jupyter, kernels) is left running.

INTEROP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$INTEROP_DIR/.." && pwd)
JMS_BIN=${JMS_BIN:-$REPO_DIR/bin/jupyter-mcp-server}
export PYDEVD_DISABLE_FILE_VALIDATION=1

log() { printf '\n=== %s\n' "$*"; }

free_port() {
	node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# ensure_node_modules installs the pinned packages when they are missing.
ensure_node_modules() {
	if [ ! -d "$INTEROP_DIR/node_modules/@modelcontextprotocol/sdk" ] ||
		[ ! -d "$INTEROP_DIR/node_modules/@modelcontextprotocol/client" ] ||
		[ ! -d "$INTEROP_DIR/node_modules/@modelcontextprotocol/conformance" ] ||
		[ ! -d "$INTEROP_DIR/node_modules/conformance-2026" ] ||
		[ ! -d "$INTEROP_DIR/node_modules/@modelcontextprotocol/inspector-cli" ]; then
		log "npm ci (interop/)"
		(cd "$INTEROP_DIR" && npm ci --no-audit --no-fund) || return 1
	fi
}

# procs_in DIR prints the pids of processes whose working directory is DIR.
procs_in() {
	local p
	for p in /proc/[0-9]*; do
		if [ "$(readlink "$p/cwd" 2>/dev/null)" = "$1" ]; then
			echo "${p#/proc/}"
		fi
	done
}

# start_server [EXTRA FLAGS...]
start_server() {
	local port
	port=$(free_port) || return 1
	SERVER_ROOT=$(mktemp -d /tmp/jms-interop-XXXXXX)
	SERVER_LOG=$SERVER_ROOT.log
	local args=(--transport streamable-http --port "$port" --start-new-code-sandbox false)
	if [ -n "${JUPYTER_URL:-}" ]; then
		args+=(--jupyter-url "$JUPYTER_URL" --jupyter-token "${JUPYTER_TOKEN:-}")
	else
		args+=(--root-dir "$SERVER_ROOT")
	fi
	args+=("$@")
	echo "starting: $JMS_BIN ${args[*]}" | sed -E 's/(--(mcp|jupyter)-token )[^ ]+/\1***/g'
	# The managed Jupyter inherits this working directory, which is how
	# stop_server finds anything left behind.
	(cd "$SERVER_ROOT" && exec "$JMS_BIN" "${args[@]}" </dev/null >"$SERVER_LOG" 2>&1) &
	SERVER_PID=$!
	MCP_URL="http://127.0.0.1:$port/mcp"
	local i code
	for i in $(seq 1 120); do
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			echo "the server exited before answering; its log:"
			cat "$SERVER_LOG"
			SERVER_PID=
			return 1
		fi
		code=$(curl -s -o /dev/null -w '%{http_code}' -m 2 "$MCP_URL" || true)
		if [ -n "$code" ] && [ "$code" != 000 ]; then
			echo "server up at $MCP_URL (pid $SERVER_PID, GET /mcp -> HTTP $code)"
			return 0
		fi
		sleep 0.5
	done
	echo "the server did not answer at $MCP_URL within 60 s; its log:"
	cat "$SERVER_LOG"
	return 1
}

# stop_server stops the server started by start_server (SIGTERM, then SIGKILL
# after 20 s) and fails if it or anything it started is still running.
stop_server() {
	local rc=0 i left
	if [ -n "${SERVER_PID:-}" ]; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		for i in $(seq 1 40); do
			kill -0 "$SERVER_PID" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$SERVER_PID" 2>/dev/null; then
			echo "FAIL: the server (pid $SERVER_PID) ignored SIGTERM for 20 s; killing it"
			kill -KILL "$SERVER_PID" 2>/dev/null || true
			rc=1
		fi
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
	if [ -n "${SERVER_ROOT:-}" ] && [ -d "$SERVER_ROOT" ]; then
		# The managed Jupyter and its kernels get a moment to follow the server.
		for i in $(seq 1 20); do
			left=$(procs_in "$SERVER_ROOT")
			[ -z "$left" ] && break
			sleep 0.5
		done
		if [ -n "$left" ]; then
			echo "FAIL: processes left running after the server stopped:"
			for i in $left; do echo "  $i: $(tr '\0' ' ' <"/proc/$i/cmdline" 2>/dev/null)"; done
			# This script started them, through the server; end them by pid.
			# shellcheck disable=SC2086 # one pid per word
			kill -KILL $left 2>/dev/null || true
			rc=1
		fi
		if [ "$rc" != 0 ] && [ -f "$SERVER_LOG" ]; then
			echo "--- server log (last 40 lines):"
			tail -40 "$SERVER_LOG"
		fi
		rm -rf "$SERVER_ROOT" "$SERVER_LOG"
		SERVER_ROOT=
	fi
	return $rc
}
