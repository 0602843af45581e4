#!/bin/sh
# Runs every Fuzz target in the module for a while each: sh scripts/fuzz.sh 10s
# (make fuzz, and CI with 5s). Targets are found by grepping the test files,
# so a new Fuzz function is picked up without touching this script. The seed
# corpora also run in every plain `go test`.
set -eu
cd "$(dirname "$0")/.."
time="${1:-10s}"
go="${GO:-go}"
export PYDEVD_DISABLE_FILE_VALIDATION=1

targets=$(grep -rEl --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . | grep -v '/node_modules/' | sort)
if [ -z "$targets" ]; then
	echo "fuzz: no Fuzz targets found" >&2
	exit 1
fi
failed=0
count=0
for file in $targets; do
	pkg="./$(dirname "${file#./}")"
	for name in $(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$file"); do
		count=$((count + 1))
		echo "--- fuzz $pkg $name ($time)"
		if ! "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$time" "$pkg"; then
			echo "--- FAIL: $pkg $name (the failing input is under $pkg/testdata/fuzz/$name/)" >&2
			failed=$((failed + 1))
		fi
	done
done
echo "--- fuzz: $count targets, $failed failed"
[ "$failed" -eq 0 ]
