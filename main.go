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
// ...@v1.2.3"), else "dev", with the VCS revision when the build recorded
// one and the version does not already name it: "v1.2.3",
// "dev (rev 1a2b3c4d5e6f, modified)".
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
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12] // as pseudo-versions shorten it
	}
	if rev == "" || strings.Contains(v, rev) {
		return v
	}
	if modified {
		return fmt.Sprintf("%s (rev %s, modified)", v, rev)
	}
	return fmt.Sprintf("%s (rev %s)", v, rev)
}
