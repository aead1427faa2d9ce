package suite

import (
	"fmt"
	"strings"

	"github.com/google/go-jsonnet/ast"
	"github.com/google/go-jsonnet/toolutils"
)

// FieldError is one problem with one field of a suite.
type FieldError struct {
	// Pos is where the field (or its nearest written ancestor) is in the
	// source, as file:line:col; empty when unknown.
	Pos string
	// Path is the field's path, e.g. "sweep.rates[2]".
	Path string
	Msg  string

	line, col int // of Pos, for ordering
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Pos != "" {
		b.WriteString(e.Pos)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// locator maps field paths to the place they were written in the suite's
// main file. Jsonnet evaluates to plain JSON, which forgets positions, so we
// walk the file's AST and remember where each nested object field stands.
// Fields built by library helpers map to the nearest ancestor the user wrote,
// e.g. "workload.input_tokens.median" to the line of "input_tokens:".
type locator map[string]ast.LocationRange

func newLocator(filename, src string) locator {
	node, err := jsonnetSnippetToAST(filename, src)
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
			p := join(path, name.Value)
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
