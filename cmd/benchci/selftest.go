package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/selftest"
)

func selftestCmd() *cobra.Command {
	var streams, rates, costStreams string
	var d time.Duration
	var format *formatFlag
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Measure benchci's own client against the simulator on this machine",
		Long: `selftest runs benchci's client against the in-process simulator, whose true
timings are known, and prints:
  - the TTFT the client adds (its measurement minus the simulator's own) at
    each number of concurrent streams;
  - the client's CPU per streamed token and memory per open stream, with
    the simulator in a separate process;
  - whether each open-loop rate is held within 1% with short requests, and
    the cores the client and the (separate) simulator used;
  - the same rates against a no-op server, which shows the client's own
    ceiling.
The simulator shares this machine's CPUs, so the figures are a lower bound on
what a client on a dedicated machine achieves.
With --format markdown or json these lines are progress on stderr, and the
tables print on stdout at the end.`,
		Example: `  benchci selftest
  benchci selftest --streams 1,64 --rates 1000 --duration 2s`,
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
			if err := selftestBounds(ss, rs, d); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format.name != "text" {
				out = cmd.ErrOrStderr()
			}
			ctx := cmd.Context()
			fmt.Fprintln(out, "chunk times come from", selftest.TimingSource())
			ov := overheadTable("client-added TTFT (measured minus the simulator's own, on the wire), closed loop")
			fmt.Fprintln(out, ov.Title+":")
			for _, c := range ss {
				o, err := selftest.ClientOverhead(ctx, c, d)
				if err != nil {
					return err
				}
				addOverhead(ov, c, o)
				fmt.Fprintf(out, "  %5d streams  %6d requests  TTFT added p50 %7.3f ms  p99 %7.3f ms (send p99 %.3f, receive p99 %.3f)  ITL error p50 %6.3f ms  p99 %6.3f ms  (server TTFT p50 %.1f ms)  errors %d\n",
					c, o.Requests, o.Added.P50, o.Added.P99, o.SendSide.P99, o.ReceiveSide.P99, o.ITLError.P50, o.ITLError.P99, o.ServerTTFT.P50, o.Errors)
				if len(o.Behind) > 0 {
					// The client fell behind: what it added is more than the
					// figures above, which time only what it sent and read.
					fmt.Fprintf(out, "  %5d streams: the client FELL BEHIND (%s): the added TTFT above is a lower bound; its workers sent p99 %.1f ms after the answer before\n",
						c, strings.Join(o.Behind, "; "), o.LagP99)
				}
			}
			cs, err := ints("--cost-streams", costStreams)
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			// A fast simulator in its own process: 5 ms steps, no per-sequence
			// cost, room for every stream, so the client is what is measured
			// and each side's CPU can be read.
			sim, err := selftest.ExternalSim(ctx, []string{exe, "sim", "--addr", "127.0.0.1:0", "--profile", "tiny",
				"--max-num-seqs", "8192", "--max-batched-tokens", "4000000", "--step-base", "5ms", "--decode-per-seq", "0"}, nil)
			if err != nil {
				return err
			}
			defer sim.Stop()
			ct := costTable("client cost, simulator in another process, 512-token streams")
			fmt.Fprintln(out, ct.Title+":")
			for _, n := range cs {
				srv0, ok0 := sim.CPU()
				c, err := selftest.ClientCost(ctx, sim.URL, n, d)
				if err != nil {
					return err
				}
				simCost, simPerToken := "", math.NaN()
				if srv1, ok1 := sim.CPU(); ok0 && ok1 && c.Tokens > 0 {
					perToken := (srv1 - srv0).Seconds() / float64(c.Tokens)
					simPerToken = perToken
					simCost = fmt.Sprintf("  simulator CPU %6.2f µs/token (%.0fk tokens/s per core)", perToken*1e6, 1/perToken/1000)
				}
				addCost(ct, n, c, simPerToken)
				fmt.Fprintf(out, "  %5d streams  %8d tokens  CPU %6.2f µs/token  memory %6.1f KiB/stream  errors %d%s\n",
					n, c.Tokens, float64(c.CPUPerToken.Nanoseconds())/1000, c.MemPerStream/1024, c.Errors, simCost)
			}
			rt1 := rateTable("open-loop rate, constant arrivals, 8 input / 4 output tokens, simulator in another process")
			fmt.Fprintln(out, rt1.Title+":")
			for _, r := range rs {
				p, err := selftest.OpenLoopRateExternal(ctx, sim, float64(r), d)
				if err != nil {
					return err
				}
				addRate(rt1, p)
				fmt.Fprintln(out, "  "+p.String())
			}
			rt2 := rateTable("open-loop rate, the same requests, simulator in this process (its engine and the client share the cores)")
			fmt.Fprintln(out, rt2.Title+":")
			for _, r := range rs {
				p, err := selftest.OpenLoopRate(ctx, float64(r), d)
				if err != nil {
					return err
				}
				addRate(rt2, p)
				fmt.Fprintln(out, "  "+p.String())
			}
			rt3 := rateTable("open-loop rate against a no-op server in this process (one read and one write per request): the client's own ceiling")
			fmt.Fprintln(out, rt3.Title+":")
			for _, r := range rs {
				p, err := selftest.OpenLoopNoop(ctx, float64(r), d)
				if err != nil {
					return err
				}
				addRate(rt3, p)
				fmt.Fprintln(out, "  "+strings.Replace(p.String(), ", simulator 0.00", "", 1))
			}
			if format.name == "text" {
				return nil
			}
			return report.Write(cmd.OutOrStdout(), format.name, report.Doc{Tables: []*report.Table{ov, ct, rt1, rt2, rt3}})
		},
	}
	cmd.Flags().StringVar(&streams, "streams", "1,64,512", "concurrent streams for the overhead test")
	cmd.Flags().StringVar(&rates, "rates", "250,1000,4000,8000", "open-loop rates (req/s)")
	cmd.Flags().StringVar(&costStreams, "cost-streams", "64,512,2048", "open streams for the CPU and memory test")
	cmd.Flags().DurationVar(&d, "duration", 5*time.Second, "measured time per test")
	format = addFormat(cmd)
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

// selftestBounds refuses loads beyond what one machine holds, and a
// measured time that would not end.
func selftestBounds(streams, rates []int, d time.Duration) error {
	if len(streams) > maxSelftestValues || len(rates) > maxSelftestValues {
		return &exitError{exitUsage, fmt.Errorf("--streams and --rates take at most %d values each", maxSelftestValues)}
	}
	for _, n := range streams {
		if err := inRange("--streams", n, 1, maxSelftestStreams); err != nil {
			return err
		}
	}
	for _, r := range rates {
		if err := inRange("--rates", r, 1, maxSelftestRate); err != nil {
			return err
		}
	}
	return inRange("--duration", d, 100*time.Millisecond, 10*time.Minute)
}
