package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/selftest"
)

// selftestOptions are selftest's flags.
type selftestOptions struct {
	streams, rates, costStreams string
	d                           time.Duration
	format                      *formatFlag
}

func selftestCmd() *cobra.Command {
	var o selftestOptions
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
			return runSelftest(cmd, o)
		},
	}
	cmd.Flags().StringVar(&o.streams, "streams", "1,64,512", "concurrent streams for the overhead test")
	cmd.Flags().StringVar(&o.rates, "rates", "250,1000,4000,8000", "open-loop rates (req/s)")
	cmd.Flags().StringVar(&o.costStreams, "cost-streams", "64,512,2048", "open streams for the CPU and memory test")
	cmd.Flags().DurationVar(&o.d, "duration", 5*time.Second, "measured time per test")
	o.format = addFormat(cmd)
	return cmd
}

// runSelftest runs the tests in turn, each printing its lines as it goes
// (progress on stderr unless the format is text), then the tables.
func runSelftest(cmd *cobra.Command, o selftestOptions) error {
	ss, err := ints("--streams", o.streams)
	if err != nil {
		return err
	}
	rs, err := ints("--rates", o.rates)
	if err != nil {
		return err
	}
	if err := selftestBounds(ss, rs, o.d); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.format.name != "text" {
		out = cmd.ErrOrStderr()
	}
	ctx := cmd.Context()
	fmt.Fprintln(out, "chunk times come from", selftest.TimingSource())
	ov, err := selftestOverhead(ctx, out, ss, o.d)
	if err != nil {
		return err
	}
	// Read only now, as it always was: a bad --cost-streams fails after
	// the overhead test has printed.
	cs, err := ints("--cost-streams", o.costStreams)
	if err != nil {
		return err
	}
	sim, err := selftestSim(ctx)
	if err != nil {
		return err
	}
	defer sim.Stop()
	ct, err := selftestCost(ctx, out, sim, cs, o.d)
	if err != nil {
		return err
	}
	rt1, err := selftestRates(out, "open-loop rate, constant arrivals, 8 input / 4 output tokens, simulator in another process", rs, "",
		func(r float64) (selftest.RatePoint, error) { return selftest.OpenLoopRateExternal(ctx, sim, r, o.d) })
	if err != nil {
		return err
	}
	rt2, err := selftestRates(out, "open-loop rate, the same requests, simulator in this process (its engine and the client share the cores)", rs, "",
		func(r float64) (selftest.RatePoint, error) { return selftest.OpenLoopRate(ctx, r, o.d) })
	if err != nil {
		return err
	}
	// No simulator: its figure, always 0, is left off the line.
	rt3, err := selftestRates(out, "open-loop rate against a no-op server in this process (one read and one write per request): the client's own ceiling", rs, ", simulator 0.00",
		func(r float64) (selftest.RatePoint, error) { return selftest.OpenLoopNoop(ctx, r, o.d) })
	if err != nil {
		return err
	}
	if o.format.name == "text" {
		return nil
	}
	return report.Write(cmd.OutOrStdout(), o.format.name, report.Doc{Tables: []*report.Table{ov, ct, rt1, rt2, rt3}})
}

// selftestOverhead measures the TTFT the client adds at each number of
// concurrent streams.
func selftestOverhead(ctx context.Context, out io.Writer, streams []int, d time.Duration) (*report.Table, error) {
	ov := overheadTable("client-added TTFT (measured minus the simulator's own, on the wire), closed loop")
	fmt.Fprintln(out, ov.Title+":")
	for _, c := range streams {
		o, err := selftest.ClientOverhead(ctx, c, d)
		if err != nil {
			return nil, err
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
	return ov, nil
}

// selftestSim starts a fast simulator in its own process: 5 ms steps, no
// per-sequence cost, room for every stream, so the client is what is
// measured and each side's CPU can be read.
func selftestSim(ctx context.Context) (*selftest.External, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return selftest.ExternalSim(ctx, []string{exe, "sim", "--addr", "127.0.0.1:0", "--profile", "tiny",
		"--max-num-seqs", "8192", "--max-batched-tokens", "4000000", "--step-base", "5ms", "--decode-per-seq", "0"}, nil)
}

// selftestCost measures the client's CPU per token and memory per stream
// at each number of open streams, and the simulator's CPU beside it.
func selftestCost(ctx context.Context, out io.Writer, sim *selftest.External, streams []int, d time.Duration) (*report.Table, error) {
	ct := costTable("client cost, simulator in another process, 512-token streams")
	fmt.Fprintln(out, ct.Title+":")
	for _, n := range streams {
		srv0, ok0 := sim.CPU()
		c, err := selftest.ClientCost(ctx, sim.URL, n, d)
		if err != nil {
			return nil, err
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
	return ct, nil
}

// selftestRates measures each open-loop rate with measure: the three
// rate tests differ only in the server sent to. cut is taken out of each
// line printed.
func selftestRates(out io.Writer, title string, rates []int, cut string, measure func(rate float64) (selftest.RatePoint, error)) (*report.Table, error) {
	t := rateTable(title)
	fmt.Fprintln(out, t.Title+":")
	for _, r := range rates {
		p, err := measure(float64(r))
		if err != nil {
			return nil, err
		}
		addRate(t, p)
		line := p.String()
		if cut != "" {
			line = strings.Replace(line, cut, "", 1)
		}
		fmt.Fprintln(out, "  "+line)
	}
	return t, nil
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
