package engine

import (
	"fmt"
	"path"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// PathFault is why a path or a name is refused before Jupyter sees it.
type PathFault int

const (
	// PathAbsolute: the path starts at the file system's root; paths are
	// relative to the Jupyter root.
	PathAbsolute PathFault = iota + 1
	// PathLeavesRoot: ".." climbs above the Jupyter root.
	PathLeavesRoot
	// PathControl: it holds a control character (NUL, a newline, an
	// escape...), which no file name on a Jupyter server should hold and
	// which would drive the terminal of whoever reads it.
	PathControl
	// PathTooLong: one of its parts is longer than file systems allow.
	PathTooLong
)

// maxNameBytes is the longest file name (one path part) the common file
// systems hold (ext4, XFS, APFS, NTFS: 255).
const maxNameBytes = 255

// BadPathError reports a path refused as written. Nothing was asked of Jupyter,
// and nothing was rewritten: "../x.ipynb" once became "x.ipynb" silently.
type BadPathError struct {
	Path  string
	Fault PathFault
}

func (e *BadPathError) Error() string {
	switch e.Fault {
	case PathAbsolute:
		return fmt.Sprintf("path %q is absolute; paths are relative to the Jupyter server's root directory", e.Path)
	case PathLeavesRoot:
		return fmt.Sprintf("path %q leaves the Jupyter server's root directory; paths are relative to it and stay inside it", e.Path)
	case PathControl:
		return fmt.Sprintf("path %q holds a control character", e.Path)
	case PathTooLong:
		return fmt.Sprintf("path %q has a part longer than %d bytes, more than a file name can hold", e.Path, maxNameBytes)
	}
	return fmt.Sprintf("path %q is not valid", e.Path)
}

// CallerCanFix marks the path as the caller's to change.
func (*BadPathError) CallerCanFix() bool { return true }

// BadNameError reports a name (of a notebook in use, of a sandbox) refused as
// written. Names are shown in the workbench, in logs and in results.
type BadNameError struct {
	Name  string
	Fault PathFault
}

func (e *BadNameError) Error() string {
	return fmt.Sprintf("the name %q holds a control character", e.Name)
}

// CallerCanFix marks the name as the caller's to change.
func (*BadNameError) CallerCanFix() bool { return true }

// checkName refuses a name with a control character.
func checkName(name string) error {
	if jupyter.HasControl(name) {
		return &BadNameError{Name: name, Fault: PathControl}
	}
	return nil
}

// cleanPath turns a path as a caller wrote it into a contents API path
// relative to the Jupyter root: blanks around it trimmed, backslashes read
// as slashes, "a/./b" and "a/x/../b" simplified. It refuses, rather than
// rewrites, a path that is absolute or leaves the root, holds a control
// character, or has a part too long to be a file name. "" and "/" name the
// root.
func cleanPath(p string) (string, error) {
	given := p
	p = strings.TrimSpace(p)
	if jupyter.HasControl(p) {
		return "", &BadPathError{Path: given, Fault: PathControl}
	}
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.Trim(p, "/") == "" {
		return "", nil
	}
	if strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0])) {
		return "", &BadPathError{Path: given, Fault: PathAbsolute}
	}
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", &BadPathError{Path: given, Fault: PathLeavesRoot}
	}
	if p == "." {
		return "", nil
	}
	for _, part := range strings.Split(p, "/") {
		if len(part) > maxNameBytes {
			return "", &BadPathError{Path: given, Fault: PathTooLong}
		}
	}
	return p, nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
