package suitefile

import (
	"fmt"
	"strings"

	"github.com/benchci/benchci/framework/suite"
	"github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
	"github.com/google/go-jsonnet/toolutils"
)

// locator maps field paths to the place they were written in the suite's
// main file. Jsonnet evaluates to plain JSON, which forgets positions, so we
// walk the file's AST and remember where each nested object field stands.
// Fields built by library helpers map to the nearest ancestor the user wrote,
// e.g. "workload.input_tokens.median" to the line of "input_tokens:".
type locator map[string]ast.LocationRange

func newLocator(filename, src string) locator {
	node, err := jsonnet.SnippetToAST(filename, src)
	if err != nil {
		return nil
	}
	l := locator{}
	l.walk(node, "")
	return l
}

func (l locator) walk(n ast.Node, path string) {
	if n == nil {
		return
	}
	if obj, ok := n.(*ast.DesugaredObject); ok {
		if _, seen := l[path]; !seen {
			// The object itself: where a missing field would have gone.
			l[path] = *obj.Loc()
		}
		for _, f := range obj.Fields {
			name, ok := f.Name.(*ast.LiteralString)
			if !ok {
				l.walk(f.Body, path)
				continue
			}
			p := suite.JoinPath(path, name.Value)
			if _, seen := l[p]; !seen {
				l[p] = f.LocRange
			}
			l.walk(f.Body, p)
		}
		for _, local := range obj.Locals {
			l.walk(local.Body, path)
		}
		return
	}
	if arr, ok := n.(*ast.Array); ok {
		for i, e := range arr.Elements {
			p := fmt.Sprintf("%s[%d]", path, i)
			if loc := e.Expr.Loc(); loc != nil && loc.IsSet() {
				if _, seen := l[p]; !seen {
					l[p] = *loc
				}
			}
			l.walk(e.Expr, p)
		}
		return
	}
	for _, c := range toolutils.Children(n) {
		l.walk(c, path)
	}
}

// place returns the line and column of the longest known prefix of path,
// or zeros when none is known.
func (l locator) place(path string) (line, col int) {
	for p := path; ; p = parent(p) {
		if loc, ok := l[p]; ok && loc.IsSet() {
			return loc.Begin.Line, loc.Begin.Column
		}
		if p == "" {
			return 0, 0
		}
	}
}

// parent strips the last ".field" or "[i]" from a path.
func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// set places fe at its path's position in file, when known.
func (l locator) set(fe *suite.FieldError, file string) {
	fe.Line, fe.Col = l.place(fe.Path)
	if fe.Line > 0 {
		fe.Pos = fmt.Sprintf("%s:%d:%d", file, fe.Line, fe.Col)
	}
}
