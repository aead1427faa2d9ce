package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// Every error kind is classed: the server's own (result.ServerErrorKinds,
// which fail even a trial that measured this machine) or not. A kind
// added here without a class would be excused by a stall silently.
func TestEveryErrorKindIsClassed(t *testing.T) {
	notServer := []string{"", "timeout", "canceled", "client_limit", "abandoned"}
	f, err := parser.ParseFile(token.NewFileSet(), "result.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ErrorKind" {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		kind, _ := strconv.Unquote(lit.Value)
		n++
		if slices.Contains(result.ServerErrorKinds, kind) == slices.Contains(notServer, kind) {
			t.Errorf("error kind %q (%s): class it in result.ServerErrorKinds or in this test's notServer", kind, vs.Names[0].Name)
		}
		return true
	})
	if n < 14 {
		t.Errorf("found %d error kinds in result.go; the test reads the wrong file", n)
	}
}
