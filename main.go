// Command ratesim replays request traces through rate-limiting algorithms.
// See "ratesim --help" and "ratesim demo".
package main

import (
	"os"
	"runtime/debug"

	"github.com/ratesim/ratesim/cmd"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	os.Exit(cmd.Main(buildVersion(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// buildVersion is the version set at build time, else the module version
// recorded by "go install", else "dev".
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return version
}
