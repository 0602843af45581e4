#!/usr/bin/env bash
# Fails when a file tracked by git is over 1 MiB, naming each one: big data
# (recordings, binaries, datasets) belongs outside the repository, fetched or
# generated when needed, or every clone pays for it forever. Sizes are those
# of the blobs in git's index, so a file staged for the next commit counts.
# MAX_TRACKED_BYTES changes the limit.
set -euo pipefail
limit=${MAX_TRACKED_BYTES:-1048576}

if ! top=$(git rev-parse --show-toplevel 2>/dev/null); then
	echo "check-big-files: $(pwd) is not a git checkout, so there are no tracked files to check" >&2
	exit 1
fi
cd "$top"

paths=()
objects=()
# Each record is "mode object stage<TAB>path", NUL-terminated.
while IFS= read -r -d '' rec; do
	read -r mode object _ <<<"${rec%%$'\t'*}"
	[ "$mode" = 160000 ] && continue # a submodule: its files are not ours
	paths+=("${rec#*$'\t'}")
	objects+=("$object")
done < <(git ls-files -s -z)

sizes=()
if [ "${#objects[@]}" -gt 0 ]; then
	mapfile -t sizes < <(printf '%s\n' "${objects[@]}" | git cat-file --batch-check='%(objectsize)')
fi
if [ "${#sizes[@]}" -ne "${#objects[@]}" ]; then
	echo "check-big-files: git cat-file gave ${#sizes[@]} sizes for ${#objects[@]} files" >&2
	exit 1
fi

big=0
for i in "${!paths[@]}"; do
	case ${sizes[$i]} in
	'' | *[!0-9]*) # a blob not in the object store, e.g. after git add -N
		continue ;;
	esac
	if [ "${sizes[$i]}" -gt "$limit" ]; then
		echo "tracked file over $limit bytes: ${paths[$i]} (${sizes[$i]} bytes)"
		big=$((big + 1))
	fi
done

if [ "$big" -gt 0 ]; then
	echo "$big tracked file(s) over the limit of $limit bytes: remove them from git (git rm --cached) and keep them out (.gitignore)"
	exit 1
fi
echo "no tracked file over $limit bytes (${#paths[@]} files checked)"
