#!/bin/sh
# Makes sure the Jupyter pieces the product and its tests use are installed
# under Debian's /usr/bin/python3. Installs them when it can (root on a
# Debian/Ubuntu machine); otherwise fails saying how.
set -e
PKGS="jupyter-server python3-ipykernel python3-matplotlib python3-nbformat python3-jupyter-client"
if /usr/bin/python3 -c 'import jupyter_server, ipykernel, matplotlib, nbformat, jupyter_client' 2>/dev/null; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "Installing Jupyter from Debian packages: $PKGS"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
	exit 0
fi
echo "Jupyter is not installed. Install it with:" >&2
echo "  sudo apt-get install --no-install-recommends $PKGS" >&2
echo "or point the server at an existing Jupyter with --jupyter-url URL --jupyter-token TOKEN." >&2
exit 1
