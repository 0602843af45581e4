#!/usr/bin/env bash
# Runs every server scenario of the MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in package.json) against our
# streamable HTTP endpoint.
#
# The scenarios in conformance-baseline.txt need the suite's own fixture tools,
# resources and prompts and are expected to fail; every other scenario must
# pass. The run fails on an unexpected failure, and on an unexpected pass (a
# stale baseline line).
#
#   interop/conformance.sh              starts the server itself (managed Jupyter,
#                                       or JUPYTER_URL/JUPYTER_TOKEN when set)
#   MCP_URL=... interop/conformance.sh  uses a running server, which must accept
#                                       requests without a token
#   CONFORMANCE=2026 ...                the newest suite, 0.2.0-alpha.12
#                                       (conformance-2026 in package.json), on
#                                       what revision 2026-07-28 requires, against
#                                       conformance-2026-baseline.txt. It asks for
#                                       Node 22 only for fs.globSync, which a
#                                       loader hook gives it (conformance-2026/).
set -euo pipefail
# shellcheck source=interop/lib.sh
. "$(dirname "$0")/lib.sh"
ensure_node_modules

if [ "${CONFORMANCE:-}" = 2026 ]; then
	suite_js=$INTEROP_DIR/node_modules/conformance-2026/dist/index.js
	node_args=(--import "$INTEROP_DIR/conformance-2026/register.mjs")
	suite_args=(--requirements 2026-07-28)
	baseline_txt=$INTEROP_DIR/conformance-2026-baseline.txt
else
	suite_js=$INTEROP_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
	node_args=()
	suite_args=(--suite all)
	baseline_txt=$INTEROP_DIR/conformance-baseline.txt
fi
echo "conformance $(node -p 'require(process.argv[1]).version' "$(dirname "$suite_js")/../package.json") ${suite_args[*]}"

work=$(mktemp -d /tmp/jms-conformance-XXXXXX)
cleanup() {
	local rc=$?
	rm -rf "$work"
	if [ -n "${SERVER_PID:-}" ]; then stop_server || rc=1; fi
	exit $rc
}
trap cleanup EXIT

if [ -z "${MCP_URL:-}" ]; then
	# The suite cannot send a bearer token, so the server accepts loopback
	# requests without one; DNS-rebinding protection must still hold, and one
	# scenario checks exactly that.
	start_server --no-auth-loopback-only
fi

# The baseline's first word per line is a scenario; the suite reads YAML.
baseline=$work/baseline.yml
echo "server:" >"$baseline"
grep -v '^[[:space:]]*\(#\|$\)' "$baseline_txt" | awk '{print "  - " $1}' >>"$baseline"
echo "expected failures (fixture scenarios): $(grep -c '^  - ' "$baseline")"

set +e
(cd "$work" && node "${node_args[@]}" "$suite_js" \
	server --url "$MCP_URL" "${suite_args[@]}" --expected-failures "$baseline" -o "$work/results") \
	2>&1 | tee "$work/out.txt"
suite_rc=${PIPESTATUS[0]}
set -e

# Our own reading of the results, so the verdict does not rest on the suite's
# exit code alone and names the scenario that broke the run. The rule is the
# suite's: a scenario fails when any of its checks is a FAILURE or a WARNING.
verdict=0
node - "$work/results" "$baseline" "$baseline_txt" <<'JS' || verdict=$?
const fs = require("fs");
const path = require("path");
const [resultsDir, baselineFile] = process.argv.slice(2);
const expected = new Set(fs.readFileSync(baselineFile, "utf8").split("\n")
  .filter((l) => l.startsWith("  - ")).map((l) => l.slice(4).trim()));
const seen = new Map();
for (const dir of fs.readdirSync(resultsDir)) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(dir);
  if (!m) continue;
  const checks = JSON.parse(fs.readFileSync(path.join(resultsDir, dir, "checks.json"), "utf8"));
  const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  seen.set(m[1], bad);
}
let wrong = 0;
let passed = 0;
for (const [name, bad] of [...seen].sort()) {
  const listed = expected.has(name);
  if (bad.length === 0) passed++;
  if (bad.length > 0 && listed) {
    // What each expected failure really is, so the baseline's reasons can
    // be checked against it.
    const c = bad[0];
    console.log(`expected failure: ${name}: ${c.status} ${c.id}: ${String(c.errorMessage || c.description).slice(0, 160)}`);
  }
  if (bad.length > 0 && !listed) {
    wrong++;
    console.log(`UNEXPECTED FAILURE: ${name}`);
    for (const c of bad) console.log(`    ${c.status} ${c.id}: ${c.errorMessage || c.description}`);
  } else if (bad.length === 0 && listed) {
    wrong++;
    console.log(`UNEXPECTED PASS: ${name} (remove it from its baseline, ${process.argv[4]})`);
  }
}
for (const name of expected) {
  if (!seen.has(name)) {
    wrong++;
    console.log(`STALE BASELINE: ${name} did not run (renamed or dropped by the suite?)`);
  }
}
if (seen.size === 0) {
  console.log("FAIL: the conformance suite wrote no result");
  process.exit(1);
}
console.log(`conformance: ${seen.size} scenarios, ${passed} passed, ${seen.size - passed} failed (${expected.size} expected to fail)`);
process.exit(wrong > 0 ? 1 : 0);
JS
if [ $verdict != 0 ] || [ "$suite_rc" != 0 ]; then
	echo "FAIL  conformance differs from $baseline_txt (suite exit code $suite_rc)"
	exit 1
fi
echo "PASS  conformance: every generic scenario passed, every fixture scenario failed as expected"
