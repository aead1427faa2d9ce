package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/runner"
	"github.com/spf13/cobra"
)

// suiteFlags are the flags every command that evaluates suites takes.
type suiteFlags struct {
	jpaths []string
	ext    []string
	tla    []string
}

func (f *suiteFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&f.jpaths, "jpath", "J", nil, "add a Jsonnet import directory, inside the suite's repository (repeatable)")
	cmd.Flags().StringArrayVar(&f.ext, "ext-str", nil, "set std.extVar(KEY) to a string: --ext-str KEY=VALUE (repeatable)")
	cmd.Flags().StringArrayVar(&f.tla, "tla-str", nil, "set a top-level argument: --tla-str KEY=VALUE (repeatable)")
}

func (f *suiteFlags) options() (suitefile.Options, error) {
	ext, err := keyValues("--ext-str", f.ext)
	if err != nil {
		return suitefile.Options{}, err
	}
	tla, err := keyValues("--tla-str", f.tla)
	if err != nil {
		return suitefile.Options{}, err
	}
	return suitefile.Options{JPaths: f.jpaths, ExtStr: ext, TLAStr: tla, Known: runner.Known()}, nil
}

func keyValues(flag string, kvs []string) (map[string]string, error) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, &exitError{exitUsage, fmt.Errorf("parsing %s %q: want KEY=VALUE", flag, kv)}
		}
		m[k] = v
	}
	return m, nil
}

// loadSuite evaluates a suite as every command does: under the suite's
// budget (suitefile.Budget's defaults), stopping when ctx is done
// (SIGTERM, Ctrl-C). An evaluation that went over its budget in a Go
// builtin cannot be stopped and goes on allocating: then the process
// exits at once, whatever the command would have done with the error.
func loadSuite(ctx context.Context, path string, opts suitefile.Options) (*suitefile.File, error) {
	l, err := suitefile.LoadContext(ctx, path, opts)
	if be := (*suitefile.BudgetError)(nil); errors.As(err, &be) && !be.Stopped {
		runaway(be)
	}
	return l, err
}

// runaway ends the process on an evaluation that could not be stopped,
// saying so as main says an error: masked and inert.
var runaway = func(err error) {
	w := redact.NewWriter(os.Stderr)
	fmt.Fprintln(w, "benchci:", report.Lines(err.Error()))
	w.Flush()
	os.Exit(exitUsage)
}
