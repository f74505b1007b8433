package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDependencyRules keeps the layering of DESIGN.md: limiters imports
// none of sim, traces, report or cmd; traces neither limiters nor sim; sim
// no cmd or report; report (the figures and the HTML report, which may
// use sim and limiters) no cmd; policy resolution (internal/spec) no cmd,
// report or renderer; the shared integer arithmetic nothing of the
// module; redisstore no sim or traces; the replay against a store
// (internal/storereplay) no cmd, report or renderer; a shard's partial
// result (internal/partial) no cmd, report or renderer.
func TestDependencyRules(t *testing.T) {
	const mod = "github.com/ratesim/ratesim/"
	rules := map[string][]string{
		"limiters":         {"sim", "traces", "report", "cmd"},
		"traces":           {"limiters", "sim", "report", "cmd"},
		"sim":              {"cmd", "report"},
		"report":           {"cmd"},
		"internal/intmath": {"limiters", "sim", "traces", "report", "cmd"},
		// The log readers' byte masks: a leaf.
		"internal/bytemask": {"limiters", "sim", "traces", "report", "cmd"},
		// Policy resolution: no renderer, report or command line.
		"internal/spec": {"cmd", "report", "internal/render"},
		// The renderer: no engine, limiters or command line.
		"internal/render": {"sim", "limiters", "cmd", "report"},
		// The progress display: no engine or command line.
		"internal/progress": {"sim", "limiters", "cmd", "report"},
		// The reports' tables: no command line.
		"internal/tables": {"cmd"},
		// The sweep's grid and scoring: no renderer or command line.
		"internal/sweep": {"cmd", "report", "internal/render"},
		// Gateways' configs read, linted and written: no renderer, report
		// or command line.
		"internal/gateway": {"cmd", "report", "internal/render"},
		// The store is a library of its own: no engine, no trace.
		"limiters/redisstore": {"sim", "traces", "report", "cmd"},
		// An engine: values in, values out, nothing rendered.
		"internal/storereplay": {"cmd", "report", "internal/render"},
		// A shard's partial result: the engine's values, nothing rendered.
		"internal/partial": {"cmd", "report", "internal/render"},
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

// TestFiguresKnowNoAlgorithm: the figures and the commands that draw them
// learn what they draw of an algorithm from the table of kinds (its
// gauge, limit, aligned windows, whether it delays), never by naming an
// algorithm or asking whether it has a window.
func TestFiguresKnowNoAlgorithm(t *testing.T) {
	fset := token.NewFileSet()
	src, err := parser.ParseFile(fset, "limiters/algorithm.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	algos := map[string]bool{}
	ast.Inspect(src, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for _, name := range vs.Names {
				if ast.IsExported(name.Name) {
					algos[name.Name] = true
				}
			}
		}
		return true
	})
	if !algos["FixedWindow"] || !algos["TickQueue"] {
		t.Fatalf("read no algorithm constants from limiters/algorithm.go: %v", algos)
	}
	files, _ := filepath.Glob("report/*.go")
	for _, f := range []string{"cmd/plot.go", "cmd/plotstate.go", "cmd/plotkinds.go", "cmd/report.go"} {
		files = append(files, f)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "limiters" && algos[sel.Sel.Name] {
				t.Errorf("%s: names limiters.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			if sel.Sel.Name == "Windowed" {
				t.Errorf("%s: asks Windowed() what an algorithm keeps", fset.Position(sel.Pos()))
			}
			return true
		})
	}
}
