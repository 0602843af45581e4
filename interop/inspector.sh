#!/usr/bin/env bash
# Lists our tools with the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli)
# over streamable HTTP, sending the bearer token, and checks that all 22 are there.
#
#   interop/inspector.sh                             starts the server itself
#   MCP_URL=... MCP_TOKEN=... interop/inspector.sh   uses a running server
set -euo pipefail
# shellcheck source=interop/lib.sh
. "$(dirname "$0")/lib.sh"
ensure_node_modules

out=$(mktemp)
cleanup() {
	local rc=$?
	rm -f "$out"
	if [ -n "${SERVER_PID:-}" ]; then stop_server || rc=1; fi
	exit $rc
}
trap cleanup EXIT

if [ -z "${MCP_URL:-}" ]; then
	MCP_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	start_server --mcp-token "$MCP_TOKEN"
fi

# inspector-cli's package bin is a launcher for the web UI; the CLI proper is
# build/index.js. It must run with build/ as its working directory: it finds
# its own package.json with fs.existsSync("../package.json"), relative to the
# working directory, and fails anywhere else.
echo "inspector-cli $MCP_URL --transport http --method tools/list --header 'Authorization: Bearer ***'"
(cd "$INTEROP_DIR/node_modules/@modelcontextprotocol/inspector-cli/build" &&
	node index.js "$MCP_URL" --transport http --method tools/list \
		--header "Authorization: Bearer ${MCP_TOKEN:-}") >"$out"
# The check is JavaScript, so its $ and backticks are meant literally.
# shellcheck disable=SC2016
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const tools = r.tools || [];
for (const t of tools) console.log(`  ${t.name}${t.outputSchema ? "" : "  (no outputSchema)"}`);
const ok = tools.length === 22 && tools.every((t) => t.outputSchema && t.inputSchema && t.description);
console.log(`${ok ? "PASS" : "FAIL"}  inspector-cli tools/list: ${tools.length} tools (want 22, each with description, inputSchema, outputSchema)`);
process.exit(ok ? 0 : 1);
' "$out"
