package main

import "testing"

func TestReleaseVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ stamped, module, want string }{
		{"v1.2.3", "v1.2.3", "v1.2.3"},                          // goreleaser or make stamped it
		{"1.2.4-snapshot+abc", "(devel)", "1.2.4-snapshot+abc"}, // stamp wins over a checkout build
		{"dev", "v1.2.3", "v1.2.3"},                             // go install module@v1.2.3
		{"dev", "(devel)", "dev"},                               // go build, no VCS information
		{"dev", "", "dev"},
	} {
		if got := releaseVersion(tc.stamped, tc.module); got != tc.want {
			t.Errorf("releaseVersion(%q, %q) = %q, want %q", tc.stamped, tc.module, got, tc.want)
		}
	}
}
