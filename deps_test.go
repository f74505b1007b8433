package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyRules keeps the layering of DESIGN.md: limiters imports
// none of sim, traces, report or cmd; traces neither limiters nor sim; sim
// no cmd or report; report no cmd; redisstore no sim or traces; the replay
// against a store (internal/storereplay) no cmd, report or renderer.
func TestDependencyRules(t *testing.T) {
	const mod = "github.com/ratesim/ratesim/"
	rules := map[string][]string{
		"limiters": {"sim", "traces", "report", "cmd"},
		"traces":   {"limiters", "sim", "report", "cmd"},
		"sim":      {"cmd", "report"},
		"report":   {"cmd"},
		// The store is a library of its own: no engine, no trace.
		"limiters/redisstore": {"sim", "traces", "report", "cmd"},
		// An engine: values in, values out, nothing rendered.
		"internal/storereplay": {"cmd", "report", "internal/render"},
	}
	for pkg, banned := range rules {
		if _, err := os.Stat(pkg); err != nil {
			continue // a package not written yet
		}
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps ./%s listed nothing", pkg)
		}
		for _, dep := range deps {
			for _, b := range banned {
				if dep == mod+b || strings.HasPrefix(dep, mod+b+"/") {
					t.Errorf("%s imports %s, which DESIGN.md forbids", pkg, dep)
				}
			}
		}
	}
}
