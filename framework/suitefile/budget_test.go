package suitefile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-jsonnet"
)

// The hostile suites of issue 40: each asks for terabytes or years.
var hostile = map[string]string{
	// A rope of 2^40 characters, flattened by a builtin.
	"double":    "local d(s, n) = if n == 0 then s else d(s + s, n - 1);\n{ description: d('x', 40) }\n",
	"makeArray": "{ description: std.length(std.makeArray(2000000000, function(i) i)) }\n",
	"join":      "{ description: std.join(',', std.makeArray(50000000, function(i) 'x')) }\n",
	// 2^40 leaves, each its own call.
	"tree":      "local f(x) = if x == 0 then 'x' else [f(x - 1), f(x - 1)];\n{ description: f(40) }\n",
	"parseJson": "{ description: std.parseJson(std.join('', std.makeArray(5000000, function(i) '['))) }\n",
	// Years of tail calls, each nesting deeper on the Go stack.
	"loop": "local loop(n) = if n == 0 then 0 else loop(n - 1) tailstrict;\n{ description: loop(1e15) }\n",
	// Years of shallow calls that allocate little: 2^60 of them.
	"spin": "local f(n) = if n == 0 then 0 else std.min(f(n - 1), f(n - 1));\n{ description: f(60) }\n",
}

func TestEvalHookInstalls(t *testing.T) {
	// The budget stops an evaluation through go-jsonnet's unexported
	// evaluation hook; an upgrade that changes it must fail here.
	if _, _, ok := hookable(jsonnet.MakeVM()); !ok {
		t.Fatal("go-jsonnet's VM.EvalHook is not func(*interpreter, ast.Node): the budget cannot stop an evaluation")
	}
}

func hostileFile(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name+".jsonnet")
	if err := os.WriteFile(path, []byte(hostile[name]), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadHostile loads a hostile suite in this process: only for those the
// hook stops, which end their goroutine.
func loadHostile(t *testing.T, ctx context.Context, name string, b Budget) (*BudgetError, time.Duration) {
	t.Helper()
	path := hostileFile(t, name)
	start := time.Now()
	_, err := LoadContext(ctx, path, Options{Root: filepath.Dir(path), Budget: b})
	took := time.Since(start)
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("%s: want a *BudgetError, got %v", name, err)
	}
	if !be.Stopped {
		t.Fatalf("%s: the evaluation went on: %v", name, err)
	}
	if !strings.HasPrefix(be.Error(), path+":") {
		t.Errorf("%s: error not placed in the suite: %v", name, err)
	}
	return be, took
}

func TestBudgetStopsEvaluation(t *testing.T) {
	// Deadlines are generous: a loaded machine must not flake this; what
	// is asserted is the refusal and that the evaluation ended.
	be, took := loadHostile(t, context.Background(), "tree", Budget{Heap: 32 << 20, Time: time.Minute})
	if be.Over != "heap" || !strings.Contains(be.Error(), "used more than 32 MB") {
		t.Errorf("tree: %v", be)
	}
	if !strings.Contains(be.At, "tree.jsonnet:1:") {
		t.Errorf("tree: placed at %q, want line 1 (f's body)", be.At)
	}
	t.Logf("tree: %v in %v", be, took)
	// A recursion deeper than go-jsonnet's MaxStack counts (tailstrict):
	// refused before the Go stack it grows is a crash.
	be, _ = loadHostile(t, context.Background(), "loop", Budget{Time: time.Minute})
	if be.Over != "depth" || !strings.Contains(be.Error(), "nested more than 20000 deep") || !strings.Contains(be.At, "loop.jsonnet:1:") {
		t.Errorf("loop: %v (at %q)", be, be.At)
	}
	be, took = loadHostile(t, context.Background(), "spin", Budget{Time: 200 * time.Millisecond})
	if be.Over != "time" || !strings.Contains(be.Error(), "used more than 200ms") || !strings.Contains(be.At, "spin.jsonnet:") {
		t.Errorf("spin: %v (at %q)", be, be.At)
	}
	if took > time.Minute { // a hang guard
		t.Errorf("spin: refused after %v", took)
	}
}

func TestBudgetCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	be, took := loadHostile(t, ctx, "spin", Budget{})
	if !errors.Is(be, context.Canceled) || !strings.Contains(be.Error(), "stopped: context canceled") {
		t.Errorf("cancelled: %v", be)
	}
	// A hang guard, not a timing: a loaded machine must not fail it.
	if took > 30*time.Second {
		t.Errorf("cancelled after 50ms, returned after %v", took)
	}
}

// TestBudgetRunaway loads each hostile suite in a process of its own, as
// the CLI does: a builtin written in Go (std.makeArray's loop, a rope's
// flattening) cannot be stopped, so LoadSource returns and the process
// exits. Each must be refused well within 10 s and 1 GB.
func TestBudgetRunaway(t *testing.T) {
	if name := os.Getenv("SUITEFILE_HOSTILE"); name != "" {
		t.Skip("the child's own run")
	}
	cases := []struct {
		name string
		heap int64 // 0: the default
	}{
		{"double", 64 << 20}, {"makeArray", 0}, {"join", 64 << 20}, {"parseJson", 64 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := hostileFile(t, c.name)
			cmd := exec.Command(os.Args[0], "-test.run=^TestBudgetChild$")
			cmd.Env = append(os.Environ(), "SUITEFILE_HOSTILE="+path, fmt.Sprintf("SUITEFILE_HEAP=%d", c.heap))
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			limit := int64(DefaultHeap)
			if c.heap > 0 {
				limit = c.heap
			}
			// Placed at the file, and at file:line:col when the hook
			// stopped it.
			// A loaded machine may reach the time budget first: either
			// refusal bounds the evaluation.
			want := fmt.Sprintf(": the suite's evaluation used more than %d MB", limit>>20)
			inTime := fmt.Sprintf(": the suite's evaluation used more than %v", DefaultTime)
			if !strings.HasPrefix(string(out), path+":") || !strings.Contains(string(out), want) && !strings.Contains(string(out), inTime) {
				t.Errorf("want %s...%s (or %s) in\n%s", path, want, inTime, out)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			t.Logf("refused in %v at a peak RSS of %d MB: %s", took, rss>>20, strings.TrimSpace(string(out)))
			// The goal's 1 GB, for a build without the race detector, whose
			// shadow memory multiplies a process's (1085 MB seen under
			// -race on a loaded machine). The time is a hang guard only:
			// a loaded machine must not fail this test by its clock (the
			// figure the issue asks for is measured by hand, on the binary).
			most := int64(1 << 30)
			if raceEnabled {
				most *= 4
			}
			if took > time.Minute || rss > most {
				t.Errorf("took %v and %d MB, want under a minute and %d MB", took, rss>>20, most>>20)
			}
		})
	}
}

// TestBudgetChild is TestBudgetRunaway's process: it loads the suite it
// is given, prints the error and exits at once, as benchci's main does.
func TestBudgetChild(t *testing.T) {
	path := os.Getenv("SUITEFILE_HOSTILE")
	if path == "" {
		t.Skip("run by TestBudgetRunaway")
	}
	var heap int64
	fmt.Sscan(os.Getenv("SUITEFILE_HEAP"), &heap)
	_, err := Load(path, Options{Root: filepath.Dir(path), Budget: Budget{Heap: heap}})
	fmt.Println(err)
	os.Exit(0)
}
