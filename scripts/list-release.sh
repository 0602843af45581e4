#!/usr/bin/env bash
# Lists the archives a goreleaser snapshot left in dist/ and checks them: one
# per release target, each holding the binary, README.md, LICENSE and the
# docs/ the README links, and checksums.txt matching them all. Run by
# `make release-check`.
set -euo pipefail
docs=$(cd "$(dirname "$0")/.." && ls docs/*.md)
cd "${1:-dist}"

targets="linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64"
bad=0
for t in $targets; do
	case $t in
	windows_*) ext=zip bin=jupyter-mcp-server.exe ;;
	*) ext=tar.gz bin=jupyter-mcp-server ;;
	esac
	archives=(jupyter-mcp-server_*_"$t.$ext")
	if [ ! -f "${archives[0]}" ]; then
		echo "missing: no $ext archive for $t"
		bad=1
		continue
	fi
	a=${archives[0]}
	if [ "$ext" = zip ]; then
		files=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$a")
	else
		files=$(tar tzf "$a")
	fi
	for f in "$bin" README.md LICENSE $docs; do
		if ! grep -qx "$f" <<<"$files"; then
			echo "missing: $a holds no $f"
			bad=1
		fi
	done
	printf '%-56s %9s bytes: %s\n' "$a" "$(wc -c <"$a")" "$(tr '\n' ' ' <<<"$files")"
done

# The binary for this machine says the version its archive is named for.
host=$(go env GOOS)_$(go env GOARCH)
for a in jupyter-mcp-server_*_"$host".tar.gz; do
	[ -f "$a" ] || break
	want=${a#jupyter-mcp-server_}
	want=${want%_"$host".tar.gz}
	tmp=$(mktemp -d)
	tar xzf "$a" -C "$tmp" jupyter-mcp-server
	got=$("$tmp/jupyter-mcp-server" --version)
	rm -rf "$tmp"
	echo "$host binary: $got"
	if [ "$got" != "jupyter-mcp-server $want" ]; then
		echo "wrong version stamp: want jupyter-mcp-server $want"
		bad=1
	fi
done

echo "checksums.txt:"
cat checksums.txt
if command -v sha256sum >/dev/null; then sum=(sha256sum); else sum=(shasum -a 256); fi
if ! out=$("${sum[@]}" -c checksums.txt 2>&1); then
	echo "$out"
	bad=1
fi
exit "$bad"
