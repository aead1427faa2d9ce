package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/selftest"
)

func selftestCmd() *cobra.Command {
	var streams, rates string
	var d time.Duration
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Measure benchci's own client against the simulator on this machine",
		Long: `selftest runs benchci's client against the in-process simulator, whose true
timings are known, and prints:
  - the TTFT the client adds (its measurement minus the simulator's own) at
    each number of concurrent streams;
  - whether each open-loop rate is held within 1% with short requests.
The simulator shares this machine's CPUs, so the figures are a lower bound on
what a client on a dedicated machine achieves.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ss, err := ints("--streams", streams)
			if err != nil {
				return err
			}
			rs, err := ints("--rates", rates)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			ctx := cmd.Context()
			fmt.Fprintln(out, "client-added TTFT (measured minus the simulator's own), closed loop:")
			for _, c := range ss {
				o, err := selftest.ClientOverhead(ctx, c, d)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "  %5d streams  %6d requests  added p50 %8.3f ms  p99 %8.3f ms  (server TTFT p50 %.1f ms)  errors %d\n",
					c, o.Requests, o.Added.P50, o.Added.P99, o.ServerTTFT.P50, o.Errors)
			}
			fmt.Fprintln(out, "open-loop rate, constant arrivals, 8 input / 4 output tokens:")
			for _, r := range rs {
				p, err := selftest.OpenLoopRate(ctx, float64(r), d)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, "  "+p.String())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&streams, "streams", "1,64,512", "concurrent streams for the overhead test")
	cmd.Flags().StringVar(&rates, "rates", "250,1000,4000,8000", "open-loop rates (req/s)")
	cmd.Flags().DurationVar(&d, "duration", 5*time.Second, "measured time per test")
	return cmd
}

func ints(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, &exitError{exitUsage, fmt.Errorf("parsing %s: %q is not a positive whole number", flag, f)}
		}
		out = append(out, n)
	}
	return out, nil
}
