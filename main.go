// Command ratesim replays request traces through rate-limiting algorithms.
// See "ratesim --help" and "ratesim demo".
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/ratesim/ratesim/cmd"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	os.Exit(cmd.Main(buildVersion(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// buildVersion is what --version shows: the version set at build time,
// else the module version the go command recorded ("go install
// ...@v1.2.3"), else "dev"; then the VCS revision and its commit time
// when the build recorded them and the version does not already name the
// revision, or that it recorded none; then the Go release it was built
// with: "v1.2.3 (go1.26.8)", "dev (rev 1a2b3c4d5e6f of
// 2026-12-01T10:00:00Z, modified; go1.26.8)".
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(version, info)
}

// versionOf is buildVersion for the version set with -ldflags and the
// build information info (nil when there is none).
func versionOf(set string, info *debug.BuildInfo) string {
	v := set
	if info == nil {
		return v
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	var rev, at string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12] // as pseudo-versions shorten it
	}
	var parts []string
	switch {
	case rev != "" && !strings.Contains(v, rev):
		r := "rev " + rev
		if at != "" {
			r += " of " + at
		}
		if modified {
			r += ", modified"
		}
		parts = append(parts, r)
	case rev == "" && v == "dev":
		// go run, go test and -buildvcs=false record no revision.
		parts = append(parts, "no revision recorded: build it with go build in a clone to have one")
	}
	if info.GoVersion != "" {
		parts = append(parts, info.GoVersion)
	}
	if len(parts) == 0 {
		return v
	}
	return fmt.Sprintf("%s (%s)", v, strings.Join(parts, "; "))
}
