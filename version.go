package main

import "runtime/debug"

// A binary built by `go install <module>@v1.2.3` has no -ldflags stamp, but
// the go command records the module's version in it; use that so --version,
// the workbench header and the MCP server info name the release either way.
func init() {
	bi, ok := debug.ReadBuildInfo()
	if ok {
		version = releaseVersion(version, bi.Main.Version)
	}
}

// releaseVersion is the stamped version, or when nothing was stamped the
// module version the go command recorded; "(devel)" is what it records for a
// build from a checkout without VCS information, which says nothing.
func releaseVersion(stamped, module string) string {
	if stamped != "dev" || module == "" || module == "(devel)" {
		return stamped
	}
	return module
}
