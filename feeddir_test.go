//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The feed directory is used only when it is ours, private and no link;
// records are written and read without following links.
func TestFeedDirectoryIsChecked(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	good := filepath.Join(base, "good")
	if err := privateDir(good); err != nil {
		t.Fatalf("a fresh directory: %v", err)
	}
	if fi, _ := os.Stat(good); fi.Mode().Perm() != 0o700 {
		t.Fatalf("made with mode %v", fi.Mode().Perm())
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(good, link)
	cases := map[string]string{open: "can be entered by other users", link: "symbolic link"}
	if os.Getuid() == 0 {
		// As root, a directory someone else made: hand it to nobody.
		theirs := filepath.Join(base, "theirs")
		os.Mkdir(theirs, 0o700)
		if err := os.Chown(theirs, 65534, 65534); err == nil {
			cases[theirs] = "belongs to another user"
		}
	}
	for dir, want := range cases {
		if err := privateDir(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
	}

	// A link planted at a record's name is replaced, not followed.
	target := filepath.Join(base, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	rec := filepath.Join(good, "feed-1.json")
	os.Symlink(target, rec)
	if err := writePrivate(rec, []byte(`{"pid":1}`)); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Fatalf("the write followed the link: %q", data)
	}
	if data, err := readPrivate(rec); err != nil || string(data) != `{"pid":1}` {
		t.Fatalf("read back %q, %v", data, err)
	}
	os.Remove(rec)
	os.Symlink(target, rec)
	if _, err := readPrivate(rec); err == nil {
		t.Fatal("a record that is a link was read")
	}
}
