package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/report"
)

func compareCmd() *cobra.Command {
	var format, key string
	cmd := &cobra.Command{
		Use:   "compare BASELINE RESULT",
		Short: "Compare a result with a baseline and print the verdict",
		Long: `compare judges RESULT against BASELINE (each a baseline file or a results
file) with the candidate suite's tolerance bands, and gates on its SLOs.
Exit code 1 on a regression, a missing point, an SLO failure, or runs that
cannot be compared (different workloads).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := readReference(args[0])
			if err != nil {
				return err
			}
			cand, err := readReference(args[1])
			if err != nil {
				return err
			}
			r, err := compareResults(base, cand)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch format {
			case "text":
				err = report.Diff(out, r)
			case "markdown":
				err = report.Markdown(out, report.Marker(key), []*compare.Report{r})
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				err = enc.Encode(r)
			default:
				return &exitError{exitUsage, fmt.Errorf("parsing --format: %q is not text, markdown or json", format)}
			}
			if err != nil {
				return err
			}
			if r.Failed() {
				return &exitError{exitFailed, errors.New("gate failed")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, markdown or json")
	cmd.Flags().StringVar(&key, "key", "benchci", "sticky comment key (markdown)")
	return cmd
}
