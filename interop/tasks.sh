#!/usr/bin/env bash
# Long runs as tasks on 2025-11-25 (SEP-1686) through the TypeScript SDK
# 1.32.2's experimental tasks client (tasks.mjs), over stdio (the client
# spawns the binary) and over streamable HTTP (one server, bearer token),
# with executions held for approval so that a task is asked through
# tasks/result. The 2026-07-28 extension's client is written against the
# ext-tasks schema in Go (mcp/tasks_client_test.go): no released client
# speaks it.
#
#   interop/tasks.sh    (needs bin/jupyter-mcp-server, Node.js 20+)
set -uo pipefail
# shellcheck source=interop/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO_DIR" || exit 1
ensure_node_modules || exit 1
trap 'if [ -n "${SERVER_PID:-}" ]; then stop_server; fi' EXIT
failed=0

log "tasks (SEP-1686) over stdio"
node "$INTEROP_DIR/tasks.mjs" --bin "$JMS_BIN" 2>&1 | grep -v '^time=' || failed=$((failed + 1))

log "tasks (SEP-1686) over streamable HTTP"
MCP_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
if start_server --mcp-token "$MCP_TOKEN" --approve execute --trust-client-approval; then
	node "$INTEROP_DIR/tasks.mjs" --http "$MCP_URL" --token "$MCP_TOKEN" 2>&1 | grep -v '^time=' || failed=$((failed + 1))
	stop_server || failed=$((failed + 1))
else
	failed=$((failed + 1))
fi
echo "tasks: $failed runs failed"
[ $failed = 0 ]
