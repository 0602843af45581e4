#!/usr/bin/env bash
# Every interoperability check, one after another, each with its output shown:
#
#   1. e2e over stdio, managed Jupyter   (official TypeScript SDK client)
#      the reference's own test suite, ported, over stdio and over HTTP
#      (same client; reference.mjs, reference-port.txt)
#   2. steering over stdio               (same client: approval by elicitation,
#                                         resource subscriptions)
#   3. e2e over streamable HTTP          (same client, bearer token)
#   4. inspector-cli tools/list          (MCP Inspector's CLI, same server)
#   5. conformance suite                 (@modelcontextprotocol/conformance)
#   6. e2e through a real JupyterHub     (scripts/jupyterhub.sh)
#
# A step that fails does not stop the others; the exit code is non-zero if any
# failed. Set SKIP_BUILD=1 to use an existing bin/jupyter-mcp-server, and
# SKIP_HUB=1 to leave out the JupyterHub step.
set -uo pipefail
# shellcheck source=interop/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO_DIR" || exit 1
export PATH="$PATH:/usr/local/go/bin"

start=$(date +%s)
results=()
failed=0
step() { # NAME COMMAND...
	local name=$1 t0 rc
	shift
	log "interop: $name"
	t0=$(date +%s)
	"$@"
	rc=$?
	if [ $rc = 0 ]; then
		results+=("PASS  $name ($(($(date +%s) - t0)) s)")
	else
		results+=("FAIL  $name ($(($(date +%s) - t0)) s, exit $rc)")
		failed=$((failed + 1))
	fi
	return 0
}

if ! command -v node >/dev/null 2>&1; then
	echo "interop: Node.js is required (node and npm on PATH)" >&2
	exit 1
fi
echo "node $(node --version), npm $(npm --version)"

if ! ensure_node_modules; then
	echo "interop: npm ci failed" >&2
	exit 1
fi
if [ "${SKIP_BUILD:-}" != 1 ]; then
	log "interop: go build -o bin/jupyter-mcp-server ."
	if ! go build -o "$JMS_BIN" .; then
		echo "interop: the build failed" >&2
		exit 1
	fi
fi
"$JMS_BIN" --version || true

# An interrupted run still stops the HTTP server it started.
trap 'rc=$?; if [ -n "${SERVER_PID:-}" ]; then stop_server; fi; exit $rc' EXIT
trap 'exit 130' INT TERM

step "e2e over stdio (managed Jupyter)" node "$INTEROP_DIR/e2e.mjs" --bin "$JMS_BIN"
step "the reference's test suite over stdio" node "$INTEROP_DIR/reference.mjs" --transport stdio --bin "$JMS_BIN"
step "the reference's test suite over streamable HTTP" node "$INTEROP_DIR/reference.mjs" --transport http --bin "$JMS_BIN"
step "steering over stdio (elicitation, subscriptions)" node "$INTEROP_DIR/steering.mjs" --bin "$JMS_BIN"

# One server, with a bearer token, serves both the HTTP e2e and the inspector.
log "interop: starting the streamable HTTP server"
MCP_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
if start_server --mcp-token "$MCP_TOKEN"; then
	step "e2e over streamable HTTP (bearer token)" node "$INTEROP_DIR/e2e.mjs" --http "$MCP_URL" --token "$MCP_TOKEN"
	step "inspector-cli tools/list over HTTP" env MCP_URL="$MCP_URL" MCP_TOKEN="$MCP_TOKEN" bash "$INTEROP_DIR/inspector.sh"
	step "HTTP server stops with its managed Jupyter" stop_server
else
	stop_server
	results+=("FAIL  streamable HTTP server did not start (e2e over HTTP, inspector not run)")
	failed=$((failed + 1))
fi
unset MCP_URL MCP_TOKEN

step "MCP conformance suite" bash "$INTEROP_DIR/conformance.sh"
if [ "${SKIP_HUB:-}" != 1 ]; then
	step "e2e through JupyterHub" bash "$REPO_DIR/scripts/jupyterhub.sh"
fi

log "interop: summary ($(($(date +%s) - start)) s)"
printf '%s\n' "${results[@]}"
total=${#results[@]}
echo "interop: $((total - failed)) passed, $failed failed"
[ $failed = 0 ]
