package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// mdProse is a Markdown file's text outside fenced code blocks, line by line.
func mdProse(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	fenced := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, l)
		}
	}
	return lines
}

// anchor is the fragment GitHub gives a heading: lower case, spaces as
// hyphens, punctuation but hyphens and underscores dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the fragments of a Markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, l := range mdProse(t, path) {
		if h := strings.TrimLeft(l, "#"); h != l && strings.HasPrefix(h, " ") {
			out[anchor(strings.TrimSpace(h))] = true
		}
	}
	return out
}

// TestDocLinks checks that every relative link in the README and docs/
// leads to a file of the repository and, with a #fragment into Markdown, to
// one of its headings: moving a doc or renaming a section must not leave a
// reader at a dead link.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md: is the test running at the module root?")
	}
	links := 0
	for _, doc := range append([]string{"README.md", filepath.Join("interop", "README.md")}, docs...) {
		for _, l := range mdProse(t, doc) {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, frag, _ := strings.Cut(target, "#")
				path := doc
				if file != "" {
					path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s: link %s: no such file", doc, target)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[frag] {
					t.Errorf("%s: link %s: %s has no heading #%s", doc, target, path, frag)
				}
			}
		}
	}
	if links < 20 {
		t.Fatalf("found only %d relative links: is the link pattern broken?", links)
	}
}
