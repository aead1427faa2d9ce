package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/export"
	"github.com/benchci/benchci/internal/httpsafe"
)

func exportCmd() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export RESULT...",
		Short: "Export results' figures as OpenMetrics: to a file, or to a Prometheus Pushgateway",
		Long: `export turns results files into the figures a dashboard reads: one gauge
family per metric of the catalogue (benchci_ttft_seconds{stat="p99"},
benchci_output_throughput, benchci_cost, ...), one series per point and
trial, labelled with the suite, variant, point, trial, engine and its
version, model and target; SLO verdicts as benchci_slo_pass (1 or 0).

--openmetrics writes OpenMetrics 1.0 text to a file ("-" for stdout), for
a node exporter's textfile collector or a CI artifact. --pushgateway PUTs
them to a Pushgateway, grouped by --job and the suite, so that each push
replaces that suite's previous figures. Figures a point did not measure
(cost without cost inputs) are left out, never exported as 0.`,
		Example: `  benchci export --openmetrics results/quickstart.prom results/quickstart.json
  benchci export --pushgateway http://127.0.0.1:9091 --job nightly results/*.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.file == "" && o.gateway == "" {
				return &exitError{exitUsage, errors.New("export: say where: --openmetrics FILE and/or --pushgateway URL")}
			}
			files, err := readResults(cmd.Context(), args)
			if err != nil {
				return err
			}
			if o.file != "" {
				var b bytes.Buffer
				if err := export.WriteOpenMetrics(&b, files); err != nil {
					return err
				}
				if o.file == "-" {
					_, err := cmd.OutOrStdout().Write(b.Bytes())
					return err
				}
				if err := result.WriteFileAtomic(o.file, b.Bytes()); err != nil {
					return &exitError{exitUsage, err}
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "openmetrics: %s\n", o.file)
			}
			if o.gateway != "" {
				return o.push(cmd, files)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.file, "openmetrics", "", `write OpenMetrics text to this file ("-": stdout)`)
	cmd.Flags().StringVar(&o.gateway, "pushgateway", "", "push to the Prometheus Pushgateway at this base URL")
	cmd.Flags().StringVar(&o.job, "job", "benchci", "the Pushgateway job the figures are grouped under")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 30*time.Second, "how long a push may take")
	return cmd
}

// exportOptions are export's flags.
type exportOptions struct {
	file, gateway, job string
	timeout            time.Duration
}

// readResults reads the results files at paths; a signal (SIGTERM or
// Ctrl-C) between two stops it.
func readResults(ctx context.Context, paths []string) ([]*result.File, error) {
	var files []*result.File
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := result.Read(p)
		if err != nil {
			return nil, &exitError{exitUsage, err}
		}
		files = append(files, f)
	}
	return files, nil
}

// push PUTs the figures to --pushgateway within --timeout, and says where,
// the URL's password redacted.
func (o exportOptions) push(cmd *cobra.Command, files []*result.File) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	if err := export.Push(ctx, httpsafe.Client(o.timeout), o.gateway, o.job, files); err != nil {
		return &exitError{exitUsage, err}
	}
	shown := o.gateway
	if u, err := url.Parse(o.gateway); err == nil {
		shown = u.Redacted()
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "pushed to %s (job %s)\n", shown, o.job)
	return nil
}
