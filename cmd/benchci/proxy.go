package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/internal/faultproxy"
)

func proxyCmd() *cobra.Command {
	var listen, upstream string
	var f faultproxy.Faults
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL",
		Short: "Serve a fault-injecting proxy in front of a real server",
		Long: `proxy forwards to an OpenAI-compatible server and injects faults into its
completions (POST requests): added latency, 429 and 503 answers with
Retry-After, connections reset and streams stalled after their first
chunk, a slow first byte. Everything else (/v1/models, /metrics, health)
passes through. Request bodies stream to the server as they come, up to
64 MiB (413 above); an answer the server cannot give (unreachable, not
HTTP, cut before its first byte) is a 502 with the reason. Point a suite
(or any client) at it to test timeouts and retries against the real engine;
a suite can also start one itself with b.target.url(..., proxy={ ... }) or
b.target.launch(..., proxy={ ... }).`,
		Example: `  # 5% of completions answered 429, 2% of streams stalled for 10s.
  benchci proxy --upstream http://127.0.0.1:8000 --rate-429 0.05 --stall-rate 0.02 --stall 10s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := faultproxy.New(upstream, f)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			ctx := cmd.Context()
			u, err := p.Listen(ctx, listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "fault proxy at %s in front of %s; Ctrl-C stops\n", u, upstream)
			<-ctx.Done()
			c := p.Counts()
			fmt.Fprintf(cmd.OutOrStdout(), "%d completions: %d x 429, %d x 503, %d reset, %d stalled\n", c.Requests, c.TooMany, c.Unavailable, c.Resets, c.Stalls)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:8001", "address to listen on")
	fl.StringVar(&upstream, "upstream", "", "the server's base URL, e.g. http://127.0.0.1:8000 (required)")
	fl.DurationVar(&f.Latency, "latency", 0, "added before every completion is forwarded")
	fl.Float64Var(&f.Rate429, "rate-429", 0, "share of completions answered 429")
	fl.Float64Var(&f.Rate503, "rate-503", 0, "share of completions answered 503")
	fl.DurationVar(&f.RetryAfter, "retry-after", 0, "Retry-After sent with 429 and 503 (whole seconds, rounded up)")
	fl.Float64Var(&f.ResetRate, "reset-rate", 0, "share of streams whose connection is dropped after the first chunk")
	fl.Float64Var(&f.StallRate, "stall-rate", 0, "share of streams paused after the first chunk")
	fl.DurationVar(&f.Stall, "stall", 5*time.Second, "how long a stalled stream pauses")
	fl.DurationVar(&f.SlowFirstByte, "slow-first-byte", 0, "held back before every answer's first bytes")
	fl.Uint64Var(&f.Seed, "seed", 1, "seed of the fault draws")
	cmd.MarkFlagRequired("upstream")
	return cmd
}
