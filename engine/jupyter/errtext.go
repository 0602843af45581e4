package jupyter

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Jupyter's error messages quote paths of the server's file system ("No
// such file or directory: '/srv/notebooks/dir/x.ipynb'"). That absolute
// root is none of a client's business (everything else addresses files
// relative to it) and tells whoever reads the error where the server keeps
// its files, so messages are cleaned before they leave this package.

// serverPath matches an absolute path quoted in a message: whole between
// quotes (Python quotes them, spaces and all), or else up to the next blank;
// it must start a word or follow a bracket, so the "//" of a URL is not one.
var serverPath = regexp.MustCompile(`'(/[^']*)'|"(/[^"]*)"|(?:^|[\s(\[=])(/[^\s'"\])]+)`)

// pathSpans are the start and end of each path serverPath finds in msg.
func pathSpans(msg string) [][2]int {
	var spans [][2]int
	for _, m := range serverPath.FindAllStringSubmatchIndex(msg, -1) {
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				spans = append(spans, [2]int{m[2*g], m[2*g+1]})
				break
			}
		}
	}
	return spans
}

// roots remembers the server roots learned from earlier messages, so that a
// message that quotes the root without the requested path is cleaned too.
type roots struct {
	mu   sync.Mutex
	seen []string
}

func (r *roots) learn(root string) {
	if root == "" || root == "/" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if s == root {
			return
		}
	}
	r.seen = append(r.seen, root)
}

func (r *roots) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// contentsRel is the notebook-relative path an API path addresses
// ("api/contents/dir/x.ipynb" -> "dir/x.ipynb"), "" for other APIs.
func contentsRel(apiPath string) string {
	p, err := url.PathUnescape(apiPath)
	if err != nil {
		p = apiPath
	}
	rel, ok := strings.CutPrefix(p, "api/contents/")
	if !ok {
		return ""
	}
	rel = strings.TrimSuffix(rel, "/checkpoints")
	return strings.Trim(rel, "/")
}

// hideServerPaths rewrites the absolute paths in msg: the server's root is
// removed (leaving the path relative to it, as the client wrote it), and an
// absolute path under no known root keeps only its last element.
func (r *roots) hideServerPaths(msg, apiPath string) string {
	rel := contentsRel(apiPath)
	matches := pathSpans(msg)
	if len(matches) == 0 {
		return msg
	}
	if rel != "" {
		for _, m := range matches {
			p := msg[m[0]:m[1]]
			if strings.HasSuffix(p, "/"+rel) {
				r.learn(strings.TrimSuffix(p, "/"+rel))
			} else if i := strings.Index(p, "/"+rel+"/"); i > 0 {
				r.learn(p[:i])
			}
		}
	}
	known := r.list()
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(msg[last:m[0]])
		b.WriteString(relativeTo(msg[m[0]:m[1]], known))
		last = m[1]
	}
	b.WriteString(msg[last:])
	return b.String()
}

// relativeTo is p relative to the first root it is under, or "…/" and its
// last element when it is under none.
func relativeTo(p string, known []string) string {
	for _, root := range known {
		if p == root {
			return "the server's root directory"
		}
		if rest, ok := strings.CutPrefix(p, root+"/"); ok {
			return rest
		}
	}
	return "…/" + path.Base(p)
}

// ControlCharacterError: a value that would become part of a request path
// holds a control character (NUL, a newline, an escape...). No file, kernel
// or session on a Jupyter server is named so; the server answers such a
// request with a bare 500, so it is not sent.
type ControlCharacterError struct {
	Value string
}

func (e *ControlCharacterError) Error() string {
	return fmt.Sprintf("%q holds a control character; no name on a Jupyter server holds one", e.Value)
}

// CallerCanFix marks the value as the caller's to change.
func (*ControlCharacterError) CallerCanFix() bool { return true }

// HasControl reports whether s holds a control character (C0, DEL or C1).
func HasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// ContentsPath is the file the failed request addressed, relative to the
// server's root ("" when it was not a contents request).
func (e *APIError) ContentsPath() string { return contentsRel(e.Path) }
