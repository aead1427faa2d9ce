// Command benchci runs LLM serving benchmarks declared in Jsonnet suites,
// checks their SLOs and writes versioned results.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/report"
	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// Exit codes, documented in the CLI contract.
const (
	exitOK     = 0
	exitFailed = 1 // a regression or an SLO failure
	exitUsage  = 2 // usage, configuration or run error; runs that cannot be compared
	// exitInconclusive: no regression and no SLO failure, but part of the
	// verdict could not be given: a point whose every trial measured this
	// machine rather than the server. Not a pass: rerun it.
	exitInconclusive = 3
)

// gateExit is the exit a set of gate reports calls for: 1 when one
// failed, 2 when one could not be compared, 3 when one is inconclusive,
// nil when all passed.
func gateExit(reports []*compare.Report) error {
	var refused, inconclusive []string
	for _, r := range reports {
		if r.Policy.Blocks() {
			// A gate that loosened itself fails as a regression would,
			// whatever else kept it from comparing.
			return &exitError{exitFailed, errors.New("gate failed: " + report.Headline(reports))}
		}
	}
	for _, r := range reports {
		switch {
		case !r.Comparable && !r.NoBaseline:
			refused = append(refused, r.Suite+": "+r.Refusal)
		case !r.Candidate.Complete:
			// A run that failed or was stopped is an error, whatever it
			// measured before.
			refused = append(refused, r.Suite+": the run is incomplete")
		case r.Failed():
			return &exitError{exitFailed, errors.New("gate failed: " + report.Headline(reports))}
		case r.Inconclusive():
			inconclusive = append(inconclusive, r.Suite)
		}
	}
	switch {
	case len(refused) > 0:
		return &exitError{exitUsage, errors.New("not compared: " + strings.Join(refused, "; "))}
	case len(inconclusive) > 0:
		return &exitError{exitInconclusive, fmt.Errorf("inconclusive (%s): part of the run measured this machine, not the server; rerun it", strings.Join(inconclusive, ", "))}
	}
	return nil
}

// exitError carries an exit code with an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the process at once
	}()
	loadMemoryLimit = DefaultLoadMemoryLimit
	os.Exit(run(ctx, os.Stdout, os.Stderr, os.Args[1:]))
}

// DefaultLoadMemoryLimit is the soft limit on the Go heap that a command
// sending load sets, unless GOMEMLIMIT sets one: the collector then works
// harder near it rather than letting garbage double the heap. Everyday
// workloads hold a few MiB and never come near it. A trace of 4M-token
// prompts (24 MB bodies, several times that in garbage to build, send
// and, with the embedded simulator, decode) peaked at 1.39 GB resident
// without it and 0.42 GB with it, in the same 7 s. A run whose live heap
// nears it pays in collector CPU, which the client's CPU canary reports.
const DefaultLoadMemoryLimit = 384 << 20

// loadMemoryLimit is the limit limitMemory sets: main's, 0 (none) in tests,
// whose process holds many commands at once.
var loadMemoryLimit int64

// limitMemory sets the soft memory limit of a command sending load.
func limitMemory() {
	if loadMemoryLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(loadMemoryLimit)
	}
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	// Secrets in the environment (GITHUB_TOKEN, API keys) are masked in
	// everything printed or written, whoever echoes them.
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	redact.AddEnv(env)
	out, errOut := redact.NewWriter(stdout), redact.NewWriter(stderr)
	defer out.Flush()
	defer errOut.Flush()
	stdout, stderr = out, errOut
	root := rootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	// Errors quote servers' words (an error body, a model name): each line
	// is printed inert, so none is read as a workflow command.
	fmt.Fprintln(stderr, "benchci:", report.Lines(err.Error()))
	if ee := (*exitError)(nil); errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage
}

func rootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "benchci",
		Short: "Benchmark-as-code for LLM inference serving",
		Long: `benchci runs the benchmark suites a repository declares in Jsonnet against an
OpenAI-compatible streaming endpoint (or its embedded simulator), measures
TTFT, TPOT, ITL and E2E latency percentiles with throughput, checks SLOs and
writes results/<suite>.json.

Exit codes: 0 pass, 1 regression or SLO failure, 2 usage/config/run error
or runs that cannot be compared, 3 inconclusive (no regression, but a point
measured this machine rather than the server, even after reruns).`,
		Example: `  benchci validate suites/quickstart.jsonnet
  benchci run suites/quickstart.jsonnet
  benchci baseline update results/quickstart.json
  benchci ci suites/quickstart.jsonnet`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	versionFlag(root)
	root.AddCommand(runCmd(), validateCmd(), compareCmd(), baselineCmd(), commentCmd(), ciCmd(), simCmd(), proxyCmd(), reportCmd(), selftestCmd(), bandsCmd(), historyCmd(), mergeCmd(), exportCmd(), initCmd(), attestCmd(), verifyCmd(), siteCmd())
	noticesToStderr(root, stderr)
	return root
}
