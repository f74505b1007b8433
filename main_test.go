package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
	tests := []struct {
		name string
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"no build info", "dev", nil, "dev"},
		{"go build with -buildvcs=false", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"dev (no revision recorded: build it with go build in a clone to have one)"},
		{"go run, with the Go release", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"dev (no revision recorded: build it with go build in a clone to have one; go1.26.8)"},
		{"a checkout with its commit time", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: append(vcs(rev, "false"), debug.BuildSetting{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"})},
			"dev (rev 1a2b3c4d5e6f of 2026-12-01T10:00:00Z; go1.26.8)"},
		{"go install of a tag", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"a checkout, modified", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")},
			"dev (rev 1a2b3c4d5e6f, modified)"},
		{"a checkout, clean", "dev", &debug.BuildInfo{Main: debug.Module{Version: ""}, Settings: vcs(rev, "false")},
			"dev (rev 1a2b3c4d5e6f)"},
		{"a pseudo-version names the revision", "dev",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101120000-1a2b3c4d5e6f+dirty"}, Settings: vcs(rev, "true")},
			"v0.0.0-20260101120000-1a2b3c4d5e6f+dirty"},
		{"a tag, with the Go release", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3 (go1.26.8)"},
		{"a tagged checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs(rev, "false")},
			"v1.2.3 (rev 1a2b3c4d5e6f)"},
		{"set with -ldflags", "v2.0.0", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")},
			"v2.0.0 (rev 1a2b3c4d5e6f)"},
	}
	for _, tt := range tests {
		if got := versionOf(tt.set, tt.info); got != tt.want {
			t.Errorf("%s: versionOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
