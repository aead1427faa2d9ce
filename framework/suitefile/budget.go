package suitefile

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/google/go-jsonnet"
	"github.com/google/go-jsonnet/ast"
)

// A suite is untrusted code (a pull request's), and Jsonnet is a language
// in which a few lines can ask for terabytes or run for years: a string
// doubled forty times, std.makeArray(2000000000, ...), f(x) = [f(x-1),
// f(x-1)]. So a suite's evaluation runs under a budget of heap and time,
// and stops when the context is done (SIGTERM, Ctrl-C).
//
// go-jsonnet has no cancellation, so the evaluation runs on a goroutine of
// its own while a watchdog polls the heap, the clock and the context. On a
// breach it raises a flag that a hook in go-jsonnet's interpreter checks
// before evaluating each node: the evaluation panics there, go-jsonnet
// turns the panic into an error, the goroutine ends and its memory is
// free. That stops everything the interpreter evaluates node by node:
// recursion, comprehensions, string concatenation, std functions written
// in Jsonnet. It does not stop one builtin written in Go while it runs,
// and some of those make much from little: std.makeArray and std.range
// (a loop of N elements), std.join, std.strReplace and the manifestation
// of a value that shares its parts (a DAG printed as a tree), deep
// equality. There LoadSource still returns at once, with a *BudgetError
// whose Stopped is false, but the goroutine runs on: the caller must end
// the process (the CLI does, since the command fails), and must not
// evaluate another suite in it.

// Budget bounds one suite's evaluation; a zero field takes its default.
type Budget struct {
	// Heap is how much the heap may grow while the suite is evaluated.
	Heap int64
	// Time is how long the evaluation may take.
	Time time.Duration
}

const (
	// DefaultHeap is Budget.Heap's default: a suite evaluates in a few
	// megabytes, and the refusal comes well before a CI runner's memory
	// is gone.
	DefaultHeap = 256 << 20
	// DefaultTime is Budget.Time's default: a suite evaluates in
	// milliseconds.
	DefaultTime = 5 * time.Second
	// MaxStack is go-jsonnet's own bound on nested calls (its default).
	MaxStack = 500
	// MaxDepth bounds how deeply evaluations nest, each a frame of
	// go-jsonnet's on the Go stack (some 6 KB): MaxStack does not count a
	// tailstrict call's, and a Go stack past its 1 GB limit is a crash,
	// not an error. The repository's suites nest about 30 deep, a
	// recursion to MaxStack some 1,500.
	MaxDepth = 20000
)

// pollEvery is how often the watchdog reads the heap.
const pollEvery = 10 * time.Millisecond

// stopGrace is how long LoadSource waits, after a breach, for the
// evaluation to reach the hook and end.
const stopGrace = 250 * time.Millisecond

func (b Budget) withDefaults() Budget {
	if b.Heap <= 0 {
		b.Heap = DefaultHeap
	}
	if b.Time <= 0 {
		b.Time = DefaultTime
	}
	return b
}

// BudgetError is a suite's evaluation stopped: over its budget, or its
// context done.
type BudgetError struct {
	// Path is the suite's file.
	Path string
	// At is the place in the suite's own files (file:line:col) the
	// evaluation had reached, when known.
	At string
	// Over is what ran out: "heap", "time" or "depth"; empty when the
	// context was done.
	Over string
	// Limit is the budget that ran out (bytes for heap, nanoseconds for
	// time, evaluations for depth).
	Limit int64
	// Err is the context's error when the context was done.
	Err error
	// Stopped is whether the evaluation ended. When false it is still
	// running in a builtin written in Go and holds its memory: the
	// process should exit rather than go on.
	Stopped bool
}

func (e *BudgetError) Error() string {
	where := e.Path
	if e.At != "" {
		where = e.At
	}
	var msg string
	switch e.Over {
	case "heap":
		msg = fmt.Sprintf("the suite's evaluation used more than %d MB", e.Limit>>20)
	case "depth":
		msg = fmt.Sprintf("the suite's evaluation nested more than %d deep", e.Limit)
	case "time":
		msg = fmt.Sprintf("the suite's evaluation used more than %s", time.Duration(e.Limit))
	default:
		msg = fmt.Sprintf("the suite's evaluation was stopped: %v", e.Err)
	}
	if !e.Stopped {
		msg += " (still running in a builtin; the process must exit)"
	}
	return where + ": " + msg
}

func (e *BudgetError) Unwrap() error { return e.Err }

// guard is the flag the watchdog raises and the hook reads, and what the
// hook learned of where the evaluation was.
type guard struct {
	stop atomic.Bool
	// Written only by the evaluating goroutine; read after it ended.
	file     *ast.Source
	userFile bool
	at       *ast.LocationRange
	// depth is how many evaluations are nested now (each a Go frame);
	// deep is set when it passed MaxDepth.
	depth int
	deep  bool
}

// errStop is the panic the hook raises; go-jsonnet recovers it.
var errStop = errors.New("suitefile: evaluation stopped")

// pre runs before go-jsonnet evaluates each node: it remembers the last
// place in a file of the suite's (not <std>) and stops the evaluation when told.
func (g *guard) pre(_ unsafe.Pointer, n ast.Node) {
	if l := n.Loc(); l != nil && l.File != nil {
		if l.File != g.file {
			g.file = l.File
			g.userFile = !strings.HasPrefix(string(l.File.DiagnosticFileName), "<")
		}
		if g.userFile {
			g.at = l
		}
	}
	g.depth++
	if g.depth > MaxDepth {
		g.deep = true
		panic(errStop)
	}
	if g.stop.Load() {
		panic(errStop)
	}
}

// post runs after go-jsonnet evaluated a node.
func (g *guard) post(_ unsafe.Pointer, _ ast.Node, _ any, _ error) {
	g.depth--
}

// place is the last place in the suite's files evaluated, or "".
func (g *guard) place() string {
	if g.at == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", g.at.File.DiagnosticFileName, g.at.Begin.Line, g.at.Begin.Column)
}

// hookable reports whether go-jsonnet's VM.EvalHook is the struct this
// package knows how to set: its fields pre a func(*interpreter, ast.Node)
// and post a func(*interpreter, ast.Node, value, error), value an
// interface. The hook is unexported (go-jsonnet's debugger sets it); a
// go-jsonnet upgrade that changes it leaves evaluations unhooked, which
// TestEvalHookInstalls catches.
func hookable(vm *jsonnet.VM) (pre, post reflect.Value, ok bool) {
	h := reflect.ValueOf(&vm.EvalHook).Elem()
	pre, post = h.FieldByName("pre"), h.FieldByName("post")
	if !pre.IsValid() || !post.IsValid() || pre.Kind() != reflect.Func || post.Kind() != reflect.Func {
		return pre, post, false
	}
	interp := func(t reflect.Type) bool {
		return t.Kind() == reflect.Pointer && t.Elem().Name() == "interpreter"
	}
	node := reflect.TypeFor[ast.Node]()
	a, b := pre.Type(), post.Type()
	ok = a.NumIn() == 2 && a.NumOut() == 0 && !a.IsVariadic() && interp(a.In(0)) && a.In(1) == node &&
		b.NumIn() == 4 && b.NumOut() == 0 && !b.IsVariadic() && interp(b.In(0)) && b.In(1) == node &&
		b.In(2).Kind() == reflect.Interface && b.In(3) == reflect.TypeFor[error]()
	return pre, post, ok
}

// setHook has vm call g.pre before each node it evaluates and g.post
// after. The funcs are stored through unsafe: their parameters are passed
// alike either way (a pointer for *interpreter, two words for the value
// interface as for any), and g.post never reads the value.
func setHook(vm *jsonnet.VM, g *guard) bool {
	pre, post, ok := hookable(vm)
	if !ok {
		return false
	}
	*(*func(unsafe.Pointer, ast.Node))(unsafe.Pointer(pre.UnsafeAddr())) = g.pre
	*(*func(unsafe.Pointer, ast.Node, any, error))(unsafe.Pointer(post.UnsafeAddr())) = g.post
	return true
}

// heapMetrics are the bytes of heap objects, live or not yet swept, and
// of goroutine stacks (deep recursion): read without stopping the world.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/stacks:bytes"}

func heapBytes(s []metrics.Sample) int64 {
	metrics.Read(s)
	var n int64
	for _, m := range s {
		if m.Value.Kind() == metrics.KindUint64 {
			n += int64(m.Value.Uint64())
		}
	}
	return n
}

// evaluate runs vm on src under budget b, returning when it ends, when
// it breaks the budget or when ctx is done, whichever comes first.
func evaluate(ctx context.Context, vm *jsonnet.VM, path, src string, b Budget) (string, error) {
	b = b.withDefaults()
	vm.MaxStack = MaxStack
	g := &guard{}
	hooked := setHook(vm, g)
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	sample := make([]metrics.Sample, len(heapMetrics))
	for k, name := range heapMetrics {
		sample[k].Name = name
	}
	base := heapBytes(sample)
	go func() {
		out, err := vm.EvaluateAnonymousSnippet(path, src)
		done <- result{out, err}
	}()
	timer := time.NewTimer(b.Time)
	defer timer.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	be := &BudgetError{Path: path}
	for be.Over == "" && be.Err == nil {
		select {
		case r := <-done:
			if g.deep {
				be.Over, be.Limit, be.Stopped = "depth", MaxDepth, true
				be.At = g.place()
				return "", be
			}
			return r.out, r.err
		case <-ctx.Done():
			be.Err = ctx.Err()
		case <-timer.C:
			be.Over, be.Limit = "time", int64(b.Time)
		case <-tick.C:
			if heapBytes(sample)-base > b.Heap {
				be.Over, be.Limit = "heap", b.Heap
			}
		}
	}
	g.stop.Store(true)
	if !hooked {
		return "", be
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-done:
		// The goroutine has ended: what it wrote is ours to read.
		be.Stopped = true
		be.At = g.place()
	case <-grace.C:
	}
	return "", be
}
