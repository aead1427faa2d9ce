package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/benchci/benchci/internal/gitfixture"
)

// history on a repository of eight quickstart baselines whose TTFT rose
// 40% at the sixth, between unrelated commits: the output (golden: the
// commits' hashes are fixed by their contents and times) names that
// commit first, and the chart is SVG.
func TestHistoryCommand(t *testing.T) {
	t.Parallel()
	r := gitfixture.New(t)
	const path = "baselines/quickstart.json"
	for i := range 8 {
		ttft := 1.0
		if i >= 5 {
			ttft = 1.4
		}
		r.Commit(fmt.Sprintf("baseline update %d", i+1), map[string][]byte{path: gitfixture.Baseline(t, "../../framework/result/testdata/quickstart-v1.json", uint64(i), ttft, "")})
		r.Commit("docs", map[string][]byte{"README.md": []byte(strings.Repeat("x", i+1))})
	}
	svg := filepath.Join(t.TempDir(), "h.svg")
	args := []string{"history", "--baselines", filepath.Join(r.Dir, "baselines"), "--charts", svg, "quickstart"}
	code, stdout, stderr := runCLI(t, context.Background(), args...)
	stdout = strings.ReplaceAll(stdout, svg, "H.svg")
	golden(t, "history", fmt.Sprintf("$ benchci history --charts H.svg quickstart\nexit %d\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr))
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ XMLName xml.Name }
	if err := xml.Unmarshal(data, &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Errorf("chart is not SVG: %v %v", doc.XMLName, err)
	}

	for _, bad := range [][]string{
		{"history", "--baselines", filepath.Join(r.Dir, "baselines"), "nosuch"},
		{"history", "--min-change", "5", "quickstart"},
		{"history", "../../suites/engine-shootout.jsonnet"},
	} {
		if code, _, stderr := runCLI(t, context.Background(), bad...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, code, stderr)
		}
	}
}

// In a shallow clone (actions/checkout's default) history shows what the
// clone holds and says, on stderr, how to fetch the rest; a canceled
// context (SIGTERM, Ctrl-C) stops it with an error.
func TestHistoryShallowAndCanceled(t *testing.T) {
	t.Parallel()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	r := gitfixture.New(t)
	const path = "baselines/quickstart.json"
	for i := range 5 {
		r.Commit(fmt.Sprintf("baseline update %d", i+1), map[string][]byte{path: gitfixture.Baseline(t, "../../framework/result/testdata/quickstart-v1.json", uint64(i), 1, "")})
	}
	clone := filepath.Join(t.TempDir(), "clone")
	cmd := exec.Command(gitBin, "clone", "--quiet", "--depth", "2", "file://"+r.Dir, clone)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	args := []string{"history", "--baselines", filepath.Join(clone, "baselines"), "--charts", "", "quickstart"}
	code, stdout, stderr := runCLI(t, context.Background(), args...)
	if code != exitOK || !strings.Contains(stdout, "history of baselines/quickstart.json: 2 versions") ||
		!strings.Contains(stderr, "shallow clone") || !strings.Contains(stderr, "git fetch --unshallow") {
		t.Errorf("shallow clone: exit %d\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args = []string{"history", "--baselines", filepath.Join(r.Dir, "baselines"), "--charts", "", "quickstart"}
	if code, stdout, stderr := runCLI(t, ctx, args...); code == exitOK || stdout != "" || !strings.Contains(stderr, "context canceled") {
		t.Errorf("canceled: exit %d\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr)
	}
}

// countdownCtx is a context canceled at its n-th check of Err, wherever
// the command is then: the walk, the parsing of versions, the search.
type countdownCtx struct {
	context.Context
	mu   sync.Mutex
	n    int
	done chan struct{}
}

func (c *countdownCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > 0 {
		if c.n--; c.n == 0 {
			close(c.done)
		}
	}
	if c.n == 0 {
		return context.Canceled
	}
	return nil
}

func (c *countdownCtx) Done() <-chan struct{} { return c.done }

// Issue 40: SIGTERM (a canceled context) at any moment stops history with
// an error and no panic (was: index out of range while versions were
// parsed), says on stderr what it had read, and prints no history; past
// the last check it runs to the end. A budget under the history's size
// names the older versions left out.
func TestHistoryStoppedAtAnyMoment(t *testing.T) {
	t.Parallel()
	r := gitfixture.New(t)
	const path = "baselines/quickstart.json"
	var size int
	for i := range 6 {
		b := gitfixture.Baseline(t, "../../framework/result/testdata/quickstart-v1.json", uint64(i), 1, "")
		size = len(b)
		r.Commit(fmt.Sprintf("baseline update %d", i+1), map[string][]byte{path: b})
	}
	args := []string{"history", "--baselines", filepath.Join(r.Dir, "baselines"), "--charts", "", "quickstart"}
	stoppedReading, finished, runs := 0, false, 0
	// Each of the walk's first 16 checks, every third of the parsing's
	// (six versions: about checks 17-35), then doubling through the
	// search's many: the runs add up to about two whole histories
	// (growing by a quarter from the start, they were five).
	next := func(n int) int {
		switch {
		case n < 16:
			return n + 1
		case n < 40:
			return n + 3
		}
		return 2 * n
	}
	for n := 1; n < 1<<16 && !finished; n = next(n) {
		runs++
		ctx := &countdownCtx{Context: context.Background(), n: n, done: make(chan struct{})}
		code, stdout, stderr := runCLI(t, ctx, args...)
		switch {
		case code == exitOK:
			finished = true
			if !strings.Contains(stdout, "6 versions") {
				t.Errorf("n=%d: finished without the 6 versions\n%s", n, stdout)
			}
		case stdout != "" || !strings.Contains(stderr, "context canceled"):
			t.Errorf("n=%d: exit %d\n--- stdout\n%s--- stderr\n%s", n, code, stdout, stderr)
		case strings.Contains(stderr, " back to ") && strings.Contains(stderr, "older versions not read"):
			stoppedReading++ // stopped while versions were parsed
		}
	}
	t.Logf("%d runs, %d stopped while versions were parsed", runs, stoppedReading)
	if !finished || stoppedReading == 0 {
		t.Errorf("finished %v, %d stops while versions were parsed said what was read: want both", finished, stoppedReading)
	}

	// A budget of 32 MiB holds them all; the flag's bounds are checked.
	if code, stdout, _ := runCLI(t, context.Background(), append(args, "--max-read", "32")...); code != exitOK || strings.Contains(stdout, "left out") || size*6 > 32<<20 {
		t.Errorf("--max-read 32: exit %d\n%s", code, stdout)
	}
	for _, bad := range []string{"0", "31", "65537"} {
		if code, _, stderr := runCLI(t, context.Background(), append(args, "--max-read", bad)...); code != exitUsage || !strings.Contains(stderr, "--max-read") {
			t.Errorf("--max-read %s: exit %d, %s", bad, code, stderr)
		}
	}
}
