// Command toolref writes the tool reference into README.md, between the
// <!-- tools:start --> and <!-- tools:end --> markers, from the MCP tool
// table. With -check it only reports whether the README is up to date.
//
//	go run ./mcp/cmd/toolref [-check] [-readme README.md]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
)

func main() {
	readme := flag.String("readme", "README.md", "the README to update")
	check := flag.Bool("check", false, "exit 1 if the README's tool reference is stale, without writing")
	flag.Parse()

	data, err := os.ReadFile(*readme)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolref:", err)
		os.Exit(2)
	}
	out, ok := mcp.SpliceToolReference(string(data))
	if !ok {
		fmt.Fprintf(os.Stderr, "toolref: %s has no %s ... %s markers\n", *readme, mcp.ToolRefStart, mcp.ToolRefEnd)
		os.Exit(2)
	}
	if out == string(data) {
		return
	}
	if *check {
		fmt.Fprintf(os.Stderr, "toolref: the tool reference in %s is stale; run go run ./mcp/cmd/toolref\n", *readme)
		os.Exit(1)
	}
	if err := os.WriteFile(*readme, []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "toolref:", err)
		os.Exit(2)
	}
}
