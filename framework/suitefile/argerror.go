package suitefile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
	"github.com/google/go-jsonnet/toolutils"
	"github.com/hashicorp/go-multierror"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/didyoumean"
	"github.com/benchci/benchci/suites/lib"
)

// keepError is go-jsonnet's error formatter that also keeps the error it
// formatted: EvaluateAnonymousSnippet returns only the text, and an
// argument error needs the stack trace's places.
type keepError struct {
	jsonnet.ErrorFormatter
	err error
}

func (k *keepError) Format(err error) string {
	k.err = err
	return k.ErrorFormatter.Format(err)
}

// The messages go-jsonnet gives a call whose arguments do not fit the
// function (value.go's checkArguments); each is followed by a name.
const (
	noParameter = "function has no parameter "
	missingArg  = "Missing argument: "
)

// argumentError turns go-jsonnet's error for a call with a wrong argument
// into one placed at the call in the suite's own file, as the decoder's
// errors are, naming the function and, for a misspelt parameter, the one
// meant: b.cost.gpu(usd_per_hr=2) otherwise reads as a stack trace. It
// returns nil for any other error, or when no frame is in the suite's file.
func argumentError(path, src string, err error) error {
	var re jsonnet.RuntimeError
	if !errors.As(err, &re) || !isArgumentError(re.Msg) {
		return nil
	}
	// The innermost frame (the trace's last) in the suite's own file is the
	// call the user wrote; one inside it is in a library the call reached.
	at := -1
	for i := len(re.StackTrace) - 1; i >= 0; i-- {
		if l := re.StackTrace[i].Loc; l.IsSet() && l.File != nil && l.File.DiagnosticFileName == ast.DiagnosticFileName(path) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	root, perr := jsonnet.SnippetToAST(path, src)
	if perr != nil {
		return nil
	}
	loc := re.StackTrace[at].Loc
	msg := re.Msg
	if at < len(re.StackTrace)-1 {
		msg += " (in a function this call reaches)"
	} else if call := findApply(root, loc); call != nil {
		msg = describe(root, call, re.Msg)
	}
	fe := &suite.FieldError{Path: fieldAt(newLocator(path, src), loc), Msg: msg,
		Line: loc.Begin.Line, Col: loc.Begin.Column, Pos: fmt.Sprintf("%s:%d:%d", path, loc.Begin.Line, loc.Begin.Column)}
	me := multierror.Append(nil, fe)
	me.ErrorFormat = listFormat(path)
	return me
}

func isArgumentError(msg string) bool {
	return strings.HasPrefix(msg, noParameter) || strings.HasPrefix(msg, missingArg) ||
		strings.HasPrefix(msg, "function expected ") || (strings.HasPrefix(msg, "Argument ") && strings.HasSuffix(msg, " already provided"))
}

// describe rewrites msg about call with the function's name and, where its
// parameters are found, the one meant or the ones it takes.
func describe(root ast.Node, call *ast.Apply, msg string) string {
	name := exprName(call.Target)
	params := paramsOf(root, call.Target)
	if name == "" {
		name = "the function"
	}
	var required, optional []string
	for _, p := range params {
		if p.DefaultArg == nil {
			required = append(required, string(p.Name))
		} else {
			optional = append(optional, string(p.Name))
		}
	}
	all := append(append([]string{}, required...), optional...)
	signature := ""
	if len(params) > 0 {
		signature = " (required: " + orNone(required) + "; optional: " + orNone(optional) + ")"
	}
	switch {
	case strings.HasPrefix(msg, noParameter):
		word := strings.TrimPrefix(msg, noParameter)
		if len(params) == 0 || slices.Contains(all, word) {
			// Not the function we found (a shadowed name): say no more than is known.
			return fmt.Sprintf("%s has no parameter %s", name, word)
		}
		if best, ok := didyoumean.Closest(word, all); ok {
			return fmt.Sprintf("%s has no parameter %s (did you mean %q?)", name, word, best)
		}
		return fmt.Sprintf("%s has no parameter %s%s", name, word, signature)
	case strings.HasPrefix(msg, missingArg):
		word := strings.TrimPrefix(msg, missingArg)
		if !slices.Contains(required, word) {
			signature = ""
		}
		return fmt.Sprintf("%s: missing argument %s%s", name, word, signature)
	}
	if !strings.HasPrefix(msg, "function ") {
		return name + ": " + msg
	}
	return name + strings.TrimPrefix(msg, "function") + signature
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// findApply returns the call written exactly at loc, or nil.
func findApply(n ast.Node, loc ast.LocationRange) *ast.Apply {
	if n == nil {
		return nil
	}
	if a, ok := n.(*ast.Apply); ok {
		if l := a.Loc(); l != nil && l.Begin == loc.Begin && l.End == loc.End {
			return a
		}
	}
	for _, c := range toolutils.Children(n) {
		if a := findApply(c, loc); a != nil {
			return a
		}
	}
	return nil
}

// exprName writes a called expression back as the user wrote it when it
// is a name or a chain of fields (b.cost.gpu), and "" otherwise.
func exprName(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Var:
		return string(n.Id)
	case *ast.Index:
		s, ok := n.Index.(*ast.LiteralString)
		if base := exprName(n.Target); ok && base != "" {
			return base + "." + s.Value
		}
	}
	return ""
}

// paramsOf finds the parameters of the function a called expression names:
// a local function of the suite's file, or a field of an object a local
// names, the embedded benchci.libsonnet when the local imports it. Nil
// when it cannot tell.
func paramsOf(root, target ast.Node) []ast.Parameter {
	if f, ok := resolve(root, target, 0).(*ast.Function); ok {
		return f.Parameters
	}
	return nil
}

// resolve follows names and fields to the expression they stand for, a
// few steps deep (a name bound to itself must not loop).
func resolve(root, n ast.Node, depth int) ast.Node {
	if depth > 8 {
		return nil
	}
	switch n := n.(type) {
	case *ast.Var:
		return resolve(root, bound(root, n.Id), depth+1)
	case *ast.Import:
		if n.File != nil && n.File.Value == lib.Name {
			libRoot, err := jsonnet.SnippetToAST(lib.Name, lib.Benchci)
			if err != nil {
				return nil
			}
			return libRoot
		}
		return nil
	case *ast.Index:
		key, ok := n.Index.(*ast.LiteralString)
		if !ok {
			return nil
		}
		obj, ok := resolve(root, n.Target, depth+1).(*ast.DesugaredObject)
		if !ok {
			return nil
		}
		for _, f := range obj.Fields {
			if name, ok := f.Name.(*ast.LiteralString); ok && name.Value == key.Value {
				return resolve(root, f.Body, depth+1)
			}
		}
		return nil
	case *ast.Local:
		return resolve(root, n.Body, depth+1)
	}
	return n
}

// bound is the expression the first local named id in the file is bound to.
func bound(n ast.Node, id ast.Identifier) ast.Node {
	if n == nil {
		return nil
	}
	var binds ast.LocalBinds
	switch n := n.(type) {
	case *ast.Local:
		binds = n.Binds
	case *ast.DesugaredObject:
		binds = n.Locals
	}
	for _, b := range binds {
		if b.Variable == id {
			if b.Fun != nil {
				return b.Fun
			}
			return b.Body
		}
	}
	for _, c := range toolutils.Children(n) {
		if b := bound(c, id); b != nil {
			return b
		}
	}
	return nil
}

// fieldAt is the deepest field path whose text holds loc, "" when none.
func fieldAt(l locator, loc ast.LocationRange) string {
	best := ""
	found := false
	for p, r := range l {
		if !r.IsSet() || !before(r.Begin, loc.Begin) || !before(loc.End, r.End) {
			continue
		}
		if !found || len(p) > len(best) || (len(p) == len(best) && p < best) {
			best, found = p, true
		}
	}
	return best
}

func before(a, b ast.Location) bool {
	return a.Line < b.Line || (a.Line == b.Line && a.Column <= b.Column)
}
