package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The packages every change to measurement touches: the client's stream,
// the open and closed loops, the recorder, the runner's points, and the
// commands. Their functions read in one screen, as a short sequence of
// named steps; a function that grows past maxLines is split by phase
// rather than let grow.
var screenPackages = []string{"internal/loadgen", "internal/client", "internal/recorder", "internal/runner", "cmd/benchci"}

const maxLines = 80

// TestFunctionsFitOnAScreen counts each function's lines, from func to
// its closing brace, in the packages above (tests aside).
func TestFunctionsFitOnAScreen(t *testing.T) {
	for _, pkg := range screenPackages {
		dir := filepath.Join("..", "..", filepath.FromSlash(pkg))
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				start, end := fset.Position(fn.Pos()), fset.Position(fn.Body.Rbrace)
				if n := end.Line - start.Line + 1; n > maxLines {
					t.Errorf("%s:%d: %s is %d lines, over %d: split it into named steps", filepath.ToSlash(path), start.Line, fn.Name.Name, n, maxLines)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
	}
}
