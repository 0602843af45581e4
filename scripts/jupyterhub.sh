#!/usr/bin/env bash
# Runs the end-to-end MCP check (interop/e2e.mjs) against a real JupyterHub:
# the Jupyter REST API and the kernel websockets of a single-user server
# (Debian's jupyter-server, started by jupyterhub-singleuser) reached through
# the Hub's configurable-http-proxy at http://127.0.0.1:PORT/user/NAME/.
#
# Installs Debian's jupyterhub package when it is missing (needs root and
# apt-get), starts the Hub on loopback with the dummy authenticator and the
# SimpleLocalProcessSpawner, creates a user and starts its server through the
# Hub's REST API with an admin service token, takes a token for that user, and
# runs e2e.mjs with JUPYTER_URL and JUPYTER_TOKEN. Everything it started is
# stopped on exit, and it fails if any process is left behind.
#
#   scripts/jupyterhub.sh          (JMS_BIN overrides the binary, default bin/jupyter-mcp-server)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=interop/lib.sh
. interop/lib.sh

HUB_PY=/usr/bin/python3

log "JupyterHub: checking the installation"
if [ ! -x /usr/bin/jupyterhub ] || [ ! -x /usr/bin/configurable-http-proxy ] ||
	! $HUB_PY -c 'import jupyterhub, jupyter_server' 2>/dev/null; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "JupyterHub is not installed and this is not a root Debian machine:" >&2
		echo "  apt-get install --no-install-recommends jupyterhub jupyter-server python3-ipykernel python3-matplotlib" >&2
		exit 1
	fi
	echo "installing Debian's jupyterhub (with configurable-http-proxy)"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		jupyterhub jupyter-server python3-ipykernel python3-matplotlib >/dev/null
fi
echo "jupyterhub $($HUB_PY -c 'import jupyterhub; print(jupyterhub.__version__)'), jupyter_server $($HUB_PY -c 'import jupyter_server; print(jupyter_server.__version__)')"
# Debian's configurable-http-proxy finds its modules (commander, http-proxy, ...)
# only through Debian's node module path, which a Node.js from elsewhere (as on
# this machine) does not search by itself.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
echo "configurable-http-proxy $(/usr/bin/configurable-http-proxy --version)"

ensure_node_modules
if [ ! -x "$JMS_BIN" ]; then
	echo "no binary at $JMS_BIN: run 'make build' first" >&2
	exit 1
fi

WORK=$(mktemp -d /tmp/jms-hub-XXXXXX)
HUB_PID=
cleanup() {
	local rc=$? i left
	log "JupyterHub: stopping"
	if [ -n "$HUB_PID" ] && kill -0 "$HUB_PID" 2>/dev/null; then
		# The Hub stops the single-user servers and the proxy it started on
		# SIGTERM (cleanup_servers, cleanup_proxy); give it time to.
		kill -TERM "$HUB_PID" 2>/dev/null || true
		for i in $(seq 1 40); do
			kill -0 "$HUB_PID" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$HUB_PID" 2>/dev/null || true
		wait "$HUB_PID" 2>/dev/null || true
	fi
	# Everything started here (Hub, proxy, single-user server, kernels) ran
	# inside $WORK; find what is left by working directory.
	for i in $(seq 1 20); do
		left=$(for p in /proc/[0-9]*; do
			case "$(readlink "$p/cwd" 2>/dev/null)" in "$WORK" | "$WORK"/*) echo "${p#/proc/}" ;; esac
		done)
		[ -z "$left" ] && break
		sleep 0.5
	done
	if [ -n "$left" ]; then
		echo "FAIL: processes left running after the Hub stopped:"
		for i in $left; do echo "  $i: $(tr '\0' ' ' <"/proc/$i/cmdline" 2>/dev/null)"; done
		# shellcheck disable=SC2086 # one pid per word
		kill -KILL $left 2>/dev/null || true
		rc=1
	else
		echo "nothing left running"
	fi
	if [ $rc != 0 ] && [ -f "$WORK/hub.log" ]; then
		echo "--- Hub log (last 60 lines):"
		tail -60 "$WORK/hub.log"
	fi
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

HUB_PORT=$(free_port)
HUB_API_PORT=$(free_port)
PROXY_API_PORT=$(free_port)
ADMIN_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
USER_NAME=mcp$(head -c 3 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$WORK/home"

cat >"$WORK/jupyterhub_config.py" <<EOF
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = $HUB_PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = $HUB_API_PORT
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:$PROXY_API_PORT"
c.ConfigurableHTTPProxy.command = ["/usr/bin/configurable-http-proxy"]
c.JupyterHub.db_url = "sqlite:///$WORK/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "$WORK/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = "$WORK/jupyterhub.pid"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# Any name and password log in: this Hub lives on loopback for one test run.
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.admin_users = set()

# Single-user servers as local processes of this (root) user, each with a home
# under the work dir; Debian's jupyter-server behind jupyterhub-singleuser.
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "$WORK/home/{username}"
c.Spawner.cmd = ["/usr/bin/jupyterhub-singleuser"]
c.Spawner.args = ["--allow-root"]
c.Spawner.default_url = "/tree"
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
c.Spawner.environment = {
    "JUPYTERHUB_SINGLEUSER_APP": "jupyter_server.serverapp.ServerApp",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}

# The token this script drives the Hub API with.
c.JupyterHub.services = [{"name": "interop", "api_token": "$ADMIN_TOKEN"}]
c.JupyterHub.load_roles = [{
    "name": "interop-admin",
    "scopes": ["admin:users", "admin:servers", "tokens", "list:users", "read:users"],
    "services": ["interop"],
}]
EOF

log "JupyterHub: starting on http://127.0.0.1:$HUB_PORT (Hub API :$HUB_API_PORT, proxy API :$PROXY_API_PORT)"
(cd "$WORK" && exec env PATH="/usr/bin:$PATH" /usr/bin/jupyterhub -f "$WORK/jupyterhub_config.py" \
	>"$WORK/hub.log" 2>&1 </dev/null) &
HUB_PID=$!

HUB=http://127.0.0.1:$HUB_PORT
api() { # METHOD PATH [JSON]
	curl -sS -m 30 -X "$1" -H "Authorization: token $ADMIN_TOKEN" -H "Content-Type: application/json" \
		${3:+--data "$3"} -w '\n%{http_code}' "$HUB/hub/api$2"
}
for i in $(seq 1 120); do
	if ! kill -0 "$HUB_PID" 2>/dev/null; then
		echo "the Hub exited; its log:"
		cat "$WORK/hub.log"
		HUB_PID=
		exit 1
	fi
	if [ "$(curl -s -o /dev/null -w '%{http_code}' -m 2 "$HUB/hub/api" || true)" = 200 ]; then
		break
	fi
	sleep 0.5
done
echo "Hub up: $(curl -sS -m 5 "$HUB/hub/api")"

log "JupyterHub: creating user $USER_NAME and starting its server"
out=$(api POST "/users/$USER_NAME")
code=${out##*$'\n'}
[ "$code" = 201 ] || { echo "creating the user answered HTTP $code: ${out%$'\n'*}"; exit 1; }
out=$(api POST "/users/$USER_NAME/server")
code=${out##*$'\n'}
case "$code" in 201 | 202) ;; *) echo "starting the server answered HTTP $code: ${out%$'\n'*}"; exit 1 ;; esac
ready=
for i in $(seq 1 180); do
	out=$(api GET "/users/$USER_NAME")
	if printf '%s' "${out%$'\n'*}" | $HUB_PY -c '
import json, sys
u = json.load(sys.stdin)
s = (u.get("servers") or {}).get("", {})
sys.exit(0 if s.get("ready") or (u.get("server") and not u.get("pending")) else 1)'; then
		ready=1
		break
	fi
	sleep 0.5
done
if [ -z "$ready" ]; then
	echo "the single-user server did not become ready in 90 s; the user: ${out%$'\n'*}"
	exit 1
fi
echo "server ready: $HUB/user/$USER_NAME/"

log "JupyterHub: taking a token for $USER_NAME"
out=$(api POST "/users/$USER_NAME/tokens" '{"note": "jupyter-mcp-server interop", "expires_in": 3600}')
code=${out##*$'\n'}
[ "$code" = 201 ] || { echo "creating the token answered HTTP $code: ${out%$'\n'*}"; exit 1; }
USER_TOKEN=$(printf '%s' "${out%$'\n'*}" | $HUB_PY -c 'import json,sys; print(json.load(sys.stdin)["token"])')

# The single-user server through the proxy, as our binary will reach it.
status=$(curl -sS -m 10 -H "Authorization: token $USER_TOKEN" -w '\n%{http_code}' "$HUB/user/$USER_NAME/api/status")
code=${status##*$'\n'}
echo "GET /user/$USER_NAME/api/status -> HTTP $code ${status%$'\n'*}"
[ "$code" = 200 ] || exit 1
echo "single-user app: $(grep -o 'Starting jupyterhub-singleuser server version [^ ]*\|jupyter_server [0-9.]* is running\|Jupyter Server [0-9.]* is running' "$WORK/hub.log" | head -2 | tr '\n' ' ')"

log "JupyterHub: e2e over stdio against $HUB/user/$USER_NAME/"
JUPYTER_URL="$HUB/user/$USER_NAME/" JUPYTER_TOKEN="$USER_TOKEN" node interop/e2e.mjs --bin "$JMS_BIN"
# The notebook must have landed in the Hub user's home: proof that the binary
# worked through the Hub and not against some other server.
nb=$(find "$WORK/home/$USER_NAME" -maxdepth 1 -name "e2e-*.ipynb" | head -1)
if [ -z "$nb" ]; then
	echo "FAIL: e2e passed but no e2e-*.ipynb is in the Hub user's home $WORK/home/$USER_NAME"
	exit 1
fi
echo "notebook written through the Hub: ${nb#"$WORK"/}"
echo "PASS  JupyterHub: e2e through the Hub's proxy"
