package jupyter

import "testing"

func TestHideServerPaths(t *testing.T) {
	t.Parallel()
	var r roots
	cases := []struct {
		name, msg, apiPath, want string
	}{
		{"the path asked for",
			"Unexpected error while saving file: d/x.ipynb [Errno 2] No such file or directory: '/srv/nb root/d/x.ipynb'",
			"api/contents/d/x.ipynb",
			// A quoted path is whole, spaces and all.
			"Unexpected error while saving file: d/x.ipynb [Errno 2] No such file or directory: 'd/x.ipynb'"},
		{"learned root",
			"[Errno 20] Not a directory: '/home/ann/work/f.txt/x.ipynb'",
			"api/contents/f.txt/x.ipynb",
			"[Errno 20] Not a directory: 'f.txt/x.ipynb'"},
		{"the root learned before, in another message",
			"Permission denied: '/home/ann/work/private'",
			"api/contents",
			"Permission denied: 'private'"},
		{"the root itself",
			"Permission denied: /home/ann/work",
			"api/contents",
			"Permission denied: the server's root directory"},
		{"escaped request path",
			"No such file or directory: '/home/ann/work/a b/x.ipynb'",
			"api/contents/a%20b/x.ipynb",
			"No such file or directory: 'a b/x.ipynb'"},
		{"a directory under the path asked for",
			"Permission denied: '/opt/jup/dir/sub'",
			"api/contents/dir",
			"Permission denied: 'dir/sub'"},
		{"an unknown absolute path keeps its last element",
			"cannot read /etc/jupyter/secret.json",
			"api/kernels/abc",
			"cannot read …/secret.json"},
		{"a URL is not a path",
			"see http://example.org/docs/x for help",
			"api/kernels/abc",
			"see http://example.org/docs/x for help"},
	}
	for _, c := range cases {
		if got := r.hideServerPaths(c.msg, c.apiPath); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
