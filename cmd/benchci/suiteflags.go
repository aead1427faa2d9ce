package main

import (
	"fmt"
	"strings"

	"github.com/benchci/benchci/framework/suitefile"
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
