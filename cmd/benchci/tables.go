package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/benchci/benchci/internal/bands"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/selftest"
	"github.com/benchci/benchci/internal/sim"
)

// The tables of the commands whose figures have no report of their own in
// internal/report: bands' proposals, selftest's measurements and sim
// check's comparisons.

// bandsDoc is bands' proposal: as text the suite's tolerance field, to
// paste into it; in other formats one row per gated figure.
func bandsDoc(suite string, runs int, floor, margin float64, ps []bands.Proposal) report.Doc {
	t := &report.Table{Title: fmt.Sprintf("tolerance bands for %s from %d unchanged runs: the widest spread x%g, at least %g%%", suite, runs, margin, floor*100),
		Columns: []report.Column{{Key: "figure", Title: "figure"}, {Key: "band", Title: "band", Right: true},
			{Key: "spread", Title: "widest spread", Right: true}, {Key: "at", Title: "at"}}}
	for _, p := range ps {
		t.Add(report.Text(p.Key), report.Number(p.Band, p.Tolerance()), report.Number(p.Spread, fmt.Sprintf("%.2f%%", 100*p.Spread)), report.Text(p.At))
	}
	return report.Doc{Tables: []*report.Table{t}, Layouts: map[string]func(io.Writer) error{
		"text": func(w io.Writer) error { return bands.Jsonnet(w, suite, runs, floor, margin, ps) },
	}}
}

// overheadTable holds what the client adds to TTFT, per streams.
func overheadTable(title string) *report.Table {
	return &report.Table{Title: title, Columns: []report.Column{
		{Key: "streams", Title: "streams", Right: true}, {Key: "requests", Title: "requests", Right: true},
		{Key: "ttft_added_p50_ms", Title: "TTFT added p50", Right: true}, {Key: "ttft_added_p99_ms", Title: "p99", Right: true},
		{Key: "send_p99_ms", Title: "send p99", Right: true}, {Key: "receive_p99_ms", Title: "receive p99", Right: true},
		{Key: "itl_error_p50_ms", Title: "ITL error p50", Right: true}, {Key: "itl_error_p99_ms", Title: "p99", Right: true},
		{Key: "server_ttft_p50_ms", Title: "server TTFT p50", Right: true}, {Key: "errors", Title: "errors", Right: true},
		{Key: "fell_behind", Title: "fell behind"},
	}}
}

func addOverhead(t *report.Table, streams int, o selftest.Overhead) {
	ms := func(v float64) report.Cell { return report.Number(v, fmt.Sprintf("%.3f ms", v)) }
	t.Add(report.Number(float64(streams), fmt.Sprint(streams)), report.Number(float64(o.Requests), fmt.Sprint(o.Requests)),
		ms(o.Added.P50), ms(o.Added.P99), ms(o.SendSide.P99), ms(o.ReceiveSide.P99), ms(o.ITLError.P50), ms(o.ITLError.P99),
		ms(o.ServerTTFT.P50), report.Number(float64(o.Errors), fmt.Sprint(o.Errors)), report.Text(strings.Join(o.Behind, "; ")))
}

// costTable holds the client's CPU per token and memory per stream.
func costTable(title string) *report.Table {
	return &report.Table{Title: title, Columns: []report.Column{
		{Key: "streams", Title: "streams", Right: true}, {Key: "tokens", Title: "tokens", Right: true},
		{Key: "cpu_us_per_token", Title: "CPU µs/token", Right: true}, {Key: "memory_kib_per_stream", Title: "KiB/stream", Right: true},
		{Key: "errors", Title: "errors", Right: true}, {Key: "simulator_cpu_us_per_token", Title: "simulator CPU µs/token", Right: true},
	}}
}

// addCost adds a row; simPerToken is the simulator's CPU seconds per
// token, NaN when it could not be read.
func addCost(t *report.Table, streams int, c selftest.Cost, simPerToken float64) {
	cpu := float64(c.CPUPerToken.Nanoseconds()) / 1000
	t.Add(report.Number(float64(streams), fmt.Sprint(streams)), report.Number(float64(c.Tokens), fmt.Sprint(c.Tokens)),
		report.Number(cpu, fmt.Sprintf("%.2f", cpu)), report.Number(c.MemPerStream/1024, fmt.Sprintf("%.1f", c.MemPerStream/1024)),
		report.Number(float64(c.Errors), fmt.Sprint(c.Errors)), report.Number(simPerToken*1e6, fmt.Sprintf("%.2f", simPerToken*1e6)))
}

// rateTable holds how open-loop rates were held.
func rateTable(title string) *report.Table {
	return &report.Table{Title: title, Columns: []report.Column{
		{Key: "target_rps", Title: "req/s", Right: true}, {Key: "scheduled_rps", Title: "scheduled", Right: true},
		{Key: "sent_rps", Title: "sent", Right: true}, {Key: "completed_rps", Title: "completed", Right: true},
		{Key: "lag_p99_ms", Title: "lag p99 ms", Right: true}, {Key: "errors", Title: "errors", Right: true},
		{Key: "client_cpu_cores", Title: "client cores", Right: true}, {Key: "server_cpu_cores", Title: "simulator cores", Right: true},
		{Key: "held", Title: "held"}, {Key: "reason", Title: "reason"},
	}}
}

func addRate(t *report.Table, p selftest.RatePoint) {
	f := func(v float64, format string) report.Cell { return report.Number(v, fmt.Sprintf(format, v)) }
	held := "no"
	if p.Held() {
		held = "yes"
	}
	t.Add(f(p.Target, "%g"), f(p.ScheduledRate, "%.2f"), f(p.SendRate, "%.2f"), f(p.Completed, "%.2f"), f(p.LagP99, "%.2f"),
		report.Number(float64(p.Errors), fmt.Sprint(p.Errors)), f(p.ClientCPU, "%.2f"), f(p.ServerCPU, "%.2f"), report.Text(held), report.Text(p.Reason))
}

// simCheckDoc is sim check's two comparisons: the simulator against
// published measurements, one row per figure, and the roofline against
// measured kernels. Its markdown is the tables docs/simulator.md carries.
func simCheckDoc(c simChecks) report.Doc {
	before, cs, ks, rs := c.before, c.cs, c.ks, c.rs
	held := heldOutTable(c.cv)
	pub := &report.Table{Title: "the simulator against published serving measurements", Columns: []report.Column{
		{Key: "engine", Title: "engine"}, {Key: "test", Title: "test"}, {Key: "gpu", Title: "GPU"}, {Key: "model", Title: "model"},
		{Key: "tp", Title: "TP", Right: true}, {Key: "weights", Title: "weights"}, {Key: "kv_cache", Title: "KV cache"},
		{Key: "concurrency", Title: "clients", Right: true}, {Key: "rate", Title: "req/s (open loop)", Right: true}, {Key: "input_tokens", Title: "in", Right: true}, {Key: "output_tokens", Title: "out", Right: true},
		{Key: "past_knee", Title: "past the knee"}, {Key: "figure", Title: "figure"}, {Key: "unit", Title: "unit"},
		{Key: "published", Title: "published", Right: true}, {Key: "simulated", Title: "simulated", Right: true}, {Key: "error", Title: "error", Right: true},
		{Key: "not_gated", Title: "not gated because"}, {Key: "known_miss", Title: "known miss"}, {Key: "added_with_roofline_2", Title: "structure not tuned on"},
	}}
	pubRows(pub, cs)
	if n := intervalNote(cs); n != "" {
		pub.Notes = append(pub.Notes, n)
	}
	kern := &report.Table{Title: "the roofline against kernels timed on a GPU", Columns: []report.Column{
		{Key: "gpu", Title: "GPU"}, {Key: "device", Title: "device"}, {Key: "model", Title: "model"}, {Key: "weights", Title: "weights"},
		{Key: "kernels", Title: "kernels"}, {Key: "unit", Title: "unit"}, {Key: "measured", Title: "measured", Right: true},
		{Key: "roofline", Title: "roofline", Right: true}, {Key: "error", Title: "error", Right: true}, {Key: "not_gated", Title: "not gated because"},
	}}
	for _, k := range ks {
		why := ""
		if !k.Gated {
			why = k.Why
		}
		kern.Add(report.Text(k.GPU), report.Text(k.Device), report.Text(k.Model), report.Text(k.Weights), report.Text(k.What), report.Text(k.Unit),
			report.Number(k.Measured, fmt.Sprintf("%.2f", k.Measured)), report.Number(k.Modelled, fmt.Sprintf("%.2f", k.Modelled)),
			report.Number(k.Error(), fmt.Sprintf("%+.0f%%", 100*k.Error())), report.Text(why))
	}
	ratios := &report.Table{Title: "speculative decoding and disaggregation against published ratios", Columns: []report.Column{
		{Key: "test", Title: "test"}, {Key: "figure", Title: "figure"}, {Key: "published", Title: "published", Right: true},
		{Key: "simulated", Title: "simulated", Right: true}, {Key: "error", Title: "error", Right: true}, {Key: "tolerance", Title: "tolerance", Right: true},
	}}
	for _, r := range rs {
		ratios.Add(report.Text(r.Test), report.Text(r.Figure), report.Number(r.Published, fmt.Sprintf("%.2f", r.Published)),
			report.Number(r.Simulated, fmt.Sprintf("%.2f", r.Simulated)), report.Number(r.Error(), fmt.Sprintf("%+.0f%%", 100*r.Error())),
			report.Number(r.Tolerance, fmt.Sprintf("%.0f%%", 100*r.Tolerance)))
	}
	open := &report.Table{Title: "open loops at moderate rates, held out by source (shown, not gated)", Columns: pub.Columns, Notes: []string{sim.OpenLoopSummary(c.open)}}
	pubRows(open, c.open)
	return report.Doc{Tables: []*report.Table{held, scalingTable(c.cv), open, pub, kern, ratios}, Layouts: map[string]func(io.Writer) error{
		"markdown": func(w io.Writer) error {
			_, err := fmt.Fprint(w, c.cv.Markdown(), "\n", scalingMarkdown(c.cv), openLoopMarkdown(c.open), sim.SummaryMarkdown(before, cs), "\n", sim.Markdown(cs), "\n", sim.KernelMarkdown(ks), "\n", sim.RatioMarkdown(rs))
			return err
		},
	}}
}

// scalingMarkdown is the tensor-parallel scaling of the held-out rows,
// with its heading, or "" where no rows differ in TP alone.
func scalingMarkdown(cv sim.CrossValidation) string {
	t := sim.ScalingMarkdown(sim.TPScaling(cv.Checked))
	if t == "" {
		return ""
	}
	return "Tensor-parallel scaling, held out by source (rows that differ in their TP alone):\n\n" + t + "\n"
}

// openLoopMarkdown is the open-loop rows' summary and table, with its
// heading, or "" where there are none.
func openLoopMarkdown(cs []sim.Checked) string {
	if len(cs) == 0 {
		return ""
	}
	return "Open loops at moderate rates (Poisson arrivals), held out by source, shown and not gated: " + sim.OpenLoopSummary(cs) + ".\n\n" + sim.Markdown(cs) + "\n"
}

// scalingTable is scalingMarkdown's table for json and the other formats:
// one row per load, figure and TP.
func scalingTable(cv sim.CrossValidation) *report.Table {
	t := &report.Table{Title: "tensor-parallel scaling, held out by source", Columns: []report.Column{
		{Key: "load", Title: "load"}, {Key: "figure", Title: "figure"}, {Key: "tp", Title: "TP", Right: true},
		{Key: "unit", Title: "unit"}, {Key: "published", Title: "published", Right: true}, {Key: "simulated", Title: "simulated", Right: true},
		{Key: "published_x_first", Title: "published, x the first", Right: true}, {Key: "simulated_x_first", Title: "simulated, x the first", Right: true},
		{Key: "ratio_error", Title: "error of the ratio", Right: true},
	}}
	for _, s := range sim.TPScaling(cv.Checked) {
		for i, tp := range s.TP {
			p, m := s.Published[i]/s.Published[0], s.Simulated[i]/s.Simulated[0]
			t.Add(report.Text(s.Load), report.Text(s.Figure), report.Number(float64(tp), fmt.Sprint(tp)), report.Text(s.Unit),
				report.Number(s.Published[i], fmt.Sprintf("%.1f", s.Published[i])), report.Number(s.Simulated[i], fmt.Sprintf("%.1f", s.Simulated[i])),
				report.Number(p, fmt.Sprintf("%.2f", p)), report.Number(m, fmt.Sprintf("%.2f", m)), report.Number(m/p-1, fmt.Sprintf("%+.0f%%", 100*(m/p-1))))
		}
	}
	return t
}

// heldOutTable is sim check's first table: each source held out, the
// overhead its fold fitted and its figures' errors, with and without it.
func heldOutTable(cv sim.CrossValidation) *report.Table {
	held := &report.Table{Title: "held out by source: each source's rows predicted by the constants the other sources' rows fit", Columns: []report.Column{
		{Key: "source", Title: "source held out"}, {Key: "engine", Title: "engine"}, {Key: "figures", Title: "figures", Right: true},
		{Key: "step_overhead_ms", Title: "step overhead without it (ms)", Right: true}, {Key: "step_overhead_all_ms", Title: "with all (ms)", Right: true},
		{Key: "median_abs_error", Title: "median abs. error held out", Right: true}, {Key: "median_abs_error_all", Title: "with all", Right: true},
		{Key: "beyond_25", Title: "beyond ±25% held out", Right: true}, {Key: "beyond_25_all", Title: "with all", Right: true},
	}, Notes: []string{"all rows held out: " + cv.Summary()}}
	ms := func(d time.Duration) report.Cell {
		v := float64(d) / 1e6
		return report.Number(v, fmt.Sprintf("%.3f", v))
	}
	pct := func(v float64) report.Cell { return report.Number(v, fmt.Sprintf("%.0f%%", 100*v)) }
	count := func(n int) report.Cell { return report.Number(float64(n), fmt.Sprint(n)) }
	for _, f := range cv.Folds {
		held.Add(report.Text(f.Source), report.Text(f.Engine), count(f.HeldOut.Figures), ms(f.Overhead), ms(f.InSample),
			pct(f.HeldOut.MedianAbsErr), pct(f.Fitted.MedianAbsErr), count(f.BeyondHeldOut), count(f.BeyondFitted))
	}
	return held
}

// pubRows adds one row per published figure of the checked rows.
func pubRows(t *report.Table, cs []sim.Checked) {
	for _, c := range cs {
		weights := c.Weights
		if weights == "" {
			weights = "bf16"
		}
		knee := "no"
		if c.PastKnee {
			knee = "yes"
		}
		for _, f := range c.Figures() {
			t.Add(report.Text(c.Engine), report.Text(c.Test), report.Text(c.GPU), report.Text(c.Model), report.Number(float64(c.TP), fmt.Sprint(c.TP)),
				report.Text(weights), report.Text(c.KVCache), report.Number(float64(c.Concurrency), fmt.Sprint(c.Concurrency)), report.Number(c.Rate, fmt.Sprintf("%.3g", c.Rate)),
				report.Number(float64(c.Input), fmt.Sprint(c.Input)), report.Number(float64(c.Output), fmt.Sprint(c.Output)), report.Text(knee),
				report.Text(f.Name), report.Text(f.Unit), report.Number(f.Published, fmt.Sprintf("%.1f", f.Published)), report.Number(f.Simulated, fmt.Sprintf("%.1f", f.Simulated)),
				report.Number(f.Error, fmt.Sprintf("%+.0f%%", 100*f.Error)), report.Text(c.Ungated[f.Name]), report.Text(c.KnownMiss), report.Text(fmt.Sprint(c.New)))
		}
	}
}
