package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stepFiles hold the engine's step and the virtual drivers: code that runs
// on the engine's goroutine (or a replay's caller) only. Their functions
// may carry //go:norace (see engine); no other file's may.
var stepFiles = []string{"disagg.go", "engine.go", "prefix.go", "replay.go", "simulate.go", "virtual.go"}

// handlerShared are the fields of seq a handler may read directly: set
// before the sequence is handed to the engine, or the live copy itself.
var handlerShared = []string{"promptTokens", "maxTokens", "hashes", "arrived", "tag", "live"}

// stepState are the engine's, the KV pool's and the cluster's fields the
// step's functions write without atomics: only the step's files reach them.
var stepState = []string{"running", "waiting", "free", "evictable", "linkFree", "transit", "steps"}

// TestHandlersReadOnlyLive holds what the race detector cannot see once
// the step's functions carry //go:norace: outside the step's files, code
// reaches a sequence's engine-owned fields only through its live copy
// (sq.live.produced, never sq.produced), and no other function opts out
// of the race detector.
func TestHandlersReadOnlyLive(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	parsed := map[string]*ast.File{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
	}
	owned := append(engineOwnedFields(t, parsed["engine.go"]), stepState...)
	if !slices.Contains(owned, "produced") || !slices.Contains(owned, "finished") {
		t.Fatalf("seq's engine-owned fields not found (got %v): the test reads the wrong struct", owned)
	}
	checked := 0
	for name, f := range parsed {
		step := slices.Contains(stepFiles, name)
		if step {
			continue
		}
		// Any directive, even one a blank line parts from its function
		// (the compiler still applies it).
		for _, g := range f.Comments {
			for _, c := range g.List {
				if strings.HasPrefix(c.Text, "//go:norace") {
					t.Errorf("%s: //go:norace outside the step's files", fset.Position(c.Pos()))
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !slices.Contains(owned, sel.Sel.Name) {
				return true
			}
			checked++
			if x, ok := sel.X.(*ast.SelectorExpr); ok && x.Sel.Name == "live" {
				return true
			}
			t.Errorf("%s: .%s read outside the engine's goroutine: go through .live", fset.Position(sel.Pos()), sel.Sel.Name)
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no handler reads a sequence's progress: the test checks nothing")
	}
}

// engineOwnedFields are seq's fields that are not handlerShared.
func engineOwnedFields(t *testing.T, f *ast.File) []string {
	t.Helper()
	var owned []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "seq" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			for _, id := range field.Names {
				if !slices.Contains(handlerShared, id.Name) {
					owned = append(owned, id.Name)
				}
			}
		}
		return false
	})
	return owned
}
