#!/usr/bin/env bash
# Both protocol eras, client by client: the Go SDK's client at its default
# (2026-07-28) and pinned to 2025-11-25 (goclient/), the TypeScript SDK
# 1.32.2 and the v2 client 2.4.0 in each negotiation mode (eras.mjs), and
# the MCP Inspector's CLI, each over stdio (the client spawns the binary) and
# over streamable HTTP (one server, bearer token). Each client checks tools,
# approval allowed and denied by the person at the client, a subscription
# update, progress carrying output, and a cancel that interrupts the kernel;
# the matrix of what each measured is printed at the end.
#
#   interop/eras.sh    (needs bin/jupyter-mcp-server, Go, Node.js 20+)
set -uo pipefail
# shellcheck source=interop/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO_DIR" || exit 1
ensure_node_modules || exit 1

GOCLIENT=$REPO_DIR/bin/interop-goclient
go build -o "$GOCLIENT" ./interop/goclient || exit 1
rows=$(mktemp)
trap 'rm -f "$rows"; if [ -n "${SERVER_PID:-}" ]; then stop_server; fi' EXIT
failed=0

# client NAME COMMAND...: runs one client, keeps its MATRIX line.
client() {
	local out rc
	out=$(mktemp)
	"$@" 2>&1 | grep -v '^time=' | tee "$out"
	rc=${PIPESTATUS[0]}
	grep '^MATRIX' "$out" >>"$rows"
	if [ "$rc" != 0 ]; then
		failed=$((failed + 1))
		grep -q '^MATRIX' "$out" || printf 'MATRIX\t%s\t?\t?\tFAIL\n' "$*" >>"$rows"
	fi
	rm -f "$out"
}

# inspector TRANSPORT TARGET...: the Inspector's CLI lists the tools and calls
# one; it cannot answer an approval, subscribe, show progress or cancel.
inspector() {
	local transport=$1 cells
	shift
	local dir="$INTEROP_DIR/node_modules/@modelcontextprotocol/inspector-cli/build"
	local version
	version=$(node -p 'require(process.argv[1]).version' "$INTEROP_DIR/node_modules/@modelcontextprotocol/inspector-cli/package.json")
	local list call
	list=$(cd "$dir" && node index.js "$@" --method tools/list 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log((JSON.parse(s).tools||[]).length))')
	call=$(cd "$dir" && node index.js "$@" --method tools/call --tool-name list_notebooks 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(r.isError?"error":(r.structuredContent&&r.structuredContent.kind)||"none")})')
	if [ "$list" = 22 ] && [ "$call" = "notebooks.list" ]; then
		echo "PASS  inspector-cli $version over $transport: tools/list $list tools, tools/call list_notebooks -> $call"
		cells=ok
	else
		echo "FAIL  inspector-cli $version over $transport: tools/list '$list', tools/call '$call'"
		cells=FAIL
		failed=$((failed + 1))
	fi
	printf 'MATRIX\tinspector-cli %s\t%s\t2025-11-25 (its SDK 1.32.2)\t%s\t-\t-\t-\t-\t-\n' "$version" "$transport" "$cells" >>"$rows"
}

log "both eras over stdio"
client "$GOCLIENT" --bin "$JMS_BIN"
client "$GOCLIENT" --bin "$JMS_BIN" --pin 2025-11-25
for c in "v1 legacy" "v2 legacy" "v2 auto" "v2 pin"; do
	read -r kind mode <<<"$c"
	client node "$INTEROP_DIR/eras.mjs" --client "$kind" --mode "$mode" --bin "$JMS_BIN"
done
stdio_root=$(mktemp -d /tmp/jms-inspector-XXXXXX)
# Not a terminal: the binary serves stdio (its --transport would be the
# Inspector's own option).
inspector stdio "$JMS_BIN" --start-new-code-sandbox false --root-dir "$stdio_root" --feed off
rm -rf "$stdio_root"

log "both eras over streamable HTTP"
MCP_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
if start_server --mcp-token "$MCP_TOKEN" --approve destructive --trust-client-approval; then
	client "$GOCLIENT" --http "$MCP_URL" --token "$MCP_TOKEN"
	client "$GOCLIENT" --http "$MCP_URL" --token "$MCP_TOKEN" --pin 2025-11-25
	for c in "v1 legacy" "v2 legacy" "v2 auto" "v2 pin"; do
		read -r kind mode <<<"$c"
		client node "$INTEROP_DIR/eras.mjs" --client "$kind" --mode "$mode" --http "$MCP_URL" --token "$MCP_TOKEN"
	done
	inspector http "$MCP_URL" --transport http --header "Authorization: Bearer $MCP_TOKEN"
	stop_server || failed=$((failed + 1))
else
	failed=$((failed + 1))
fi

log "the matrix (ok: measured and passed; -: the client cannot do it)"
echo "| client | transport | era | tools | approval accept | approval decline | subscription update | progress with output | cancel |"
echo "|---|---|---|---|---|---|---|---|---|"
awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$rows"
echo "eras: $failed client runs failed"
[ $failed = 0 ]
