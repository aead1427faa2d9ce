// Package report renders results for people and programs. Every report is
// a Doc of Tables (doc.go), which each format renders: format_text.go,
// format_markdown.go, format_json.go; a new format is one more such file.
// Where golden files fix a layout the table cannot express (the PR
// comment, the summary a run prints, the variants' markdown with its
// chart), a Doc keeps that layout for its format.
package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// Points is a results file's table: one row per point, with load,
// requests, errors, the rate sent beside the rate completed, throughput,
// and TTFT/TPOT/ITL/E2E at P50 and P99, so throughput is never shown
// without the load offered and the latency it cost; then the notes, the
// knee, the capacity and the SLOs.
func Points(f *result.File) Doc {
	title := fmt.Sprintf("suite %s  target %s (%s, model %s)", f.Suite.Name, f.Target.Kind, f.Target.URL, OneLine(f.Target.Model))
	if e := f.Engine; e != nil && e.Name != "unknown" {
		title += fmt.Sprintf("  engine %s %s", e.Name, OneLine(e.Version))
	}
	if f.Virtual {
		// Said in the title, not only in the notes below: every figure
		// of the table is the simulated clock's.
		title += "  VIRTUAL TIME (simulated clock): replayed, not measured"
	}
	t := &Table{Title: title, Columns: pointColumns}
	for _, p := range f.Points {
		l := p.Latency
		cost := Text("-")
		if c := p.Cost; c != nil && c.PerMOutput != 0 {
			cost = Number(c.PerMOutput, USD(c))
		}
		errRate := Number(p.Requests.ErrorRate, fmt.Sprintf("%.1f", 100*p.Requests.ErrorRate))
		reqs := Number(p.Throughput.Requests, fmt.Sprintf("%.2f", p.Throughput.Requests))
		toks := Number(p.Throughput.OutputTokens, fmt.Sprintf("%.0f", p.Throughput.OutputTokens))
		if p.Requests.Sent == 0 {
			// Nothing of the point's was measured: a warm-up's tokens
			// ending in the window are no figure of it.
			errRate, reqs, toks, cost = Text("-"), Text("-"), Text("-"), Text("-")
		}
		t.Add(Text(p.Label), Number(float64(p.Trial), fmt.Sprint(p.Trial)), Number(float64(p.Requests.Sent), fmt.Sprint(p.Requests.Sent)),
			errRate, Number(p.Schedule.SendRate, fmt.Sprintf("%.2f", p.Schedule.SendRate)), reqs, toks,
			msCell(l[metric.TTFT].P50), msCell(l[metric.TTFT].P99),
			msCell(l[metric.TPOT].P50), msCell(l[metric.TPOT].P99),
			msCell(l[metric.ITL].P50), msCell(l[metric.ITL].P99),
			msCell(l[metric.E2E].P50), msCell(l[metric.E2E].P99),
			msCell(l[metric.Lag].P99), cost, Text(strings.TrimSpace(Flags(p))))
	}
	t.Notes = append(t.Notes, pointNotes(f)...)
	for _, n := range f.Notes {
		t.Notes = append(t.Notes, "note: "+OneLine(n))
	}
	if k := f.Knee; k != nil {
		t.Notes = append(t.Notes, fmt.Sprintf("knee: %s (%s)", k.Point, k.Rule))
	}
	if c := f.Capacity; c != nil {
		t.Notes = append(t.Notes, "capacity: "+CapacityString(c))
	}
	if n := SimulatedNote(f); n != "" {
		t.Notes = append(t.Notes, n)
	}
	if len(f.SLOs) > 0 {
		t.Notes = append(t.Notes, "SLOs:")
		trials := result.SeveralTrials(f.SLOs)
		for _, s := range f.SLOs {
			verdict := "PASS"
			switch {
			case s.Inconclusive:
				verdict = "INCONCLUSIVE"
			case !s.Pass:
				verdict = "FAIL"
			}
			line := fmt.Sprintf("  %s  %s", verdict, s.Name)
			if s.Point != "" {
				line += fmt.Sprintf("  [%s: %s %s]", s.Where(trials), Plain(s.Measured, 4), s.Unit)
			}
			if s.Note != "" {
				line += "  (" + s.Note + ")"
			}
			t.Notes = append(t.Notes, line)
		}
	}
	if f.Incomplete {
		t.Notes = append(t.Notes, "INCOMPLETE: "+OneLine(f.Error))
	}
	if f.ServerLog != "" {
		t.Notes = append(t.Notes, "the launched server exited; its last lines:\n"+Lines(f.ServerLog))
	}
	return Doc{Tables: []*Table{t}}
}

// pointColumns are the points table's columns; JSON keys carry units.
var pointColumns = []Column{
	{Key: "point", Title: "point", Right: true}, {Key: "trial", Title: "trial", Right: true},
	{Key: "requests", Title: "reqs", Right: true}, {Key: "error_rate", Title: "err%", Right: true},
	{Key: "sent_rps", Title: "sent/s", Right: true}, {Key: "request_throughput_rps", Title: "req/s", Right: true},
	{Key: "output_throughput_tok_s", Title: "out tok/s", Right: true},
	{Key: "ttft_p50_ms", Title: "TTFT p50", Right: true}, {Key: "ttft_p99_ms", Title: "p99", Right: true},
	{Key: "tpot_p50_ms", Title: "TPOT p50", Right: true}, {Key: "tpot_p99_ms", Title: "p99", Right: true},
	{Key: "itl_p50_ms", Title: "ITL p50", Right: true}, {Key: "itl_p99_ms", Title: "p99", Right: true},
	{Key: "e2e_p50_ms", Title: "E2E p50", Right: true}, {Key: "e2e_p99_ms", Title: "p99", Right: true},
	{Key: "lag_p99_ms", Title: "lag p99", Right: true}, {Key: "cost_usd_per_m_output", Title: "$/1M out", Right: true},
	// Flags follow the last column, unaligned, where a point has them.
	{Key: "flags", Title: ""},
}

// msCell is a latency cell; 0 is no figure.
func msCell(v float64) Cell {
	if v == 0 {
		return Text(Ms(v))
	}
	return Number(v, Ms(v))
}

func Ms(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.2fms", v)
	case v < 1000:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fs", v/1000)
}

// Plain writes v to digits significant digits as people read numbers,
// never in exponent form: 11260 (not 1.126e+04), 0.00001234 (not
// 1.234e-05). Digits beyond the integer part of a large figure are kept,
// as the table's tok/s column keeps them.
func Plain(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'g', digits, 64)
	if !strings.ContainsRune(s, 'e') {
		return s
	}
	if math.Abs(v) >= 1 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(s, 64) // rounded to digits first, then spelt out
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func USD(c *result.Cost) string {
	if c == nil || c.PerMOutput == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.2f", c.PerMOutput)
}

// Flags marks points whose figures need a second look.
func Flags(p result.Point) string {
	var f []string
	if !p.Valid() {
		f = append(f, "INVALID")
	}
	if p.Schedule.ClientSaturated {
		f = append(f, "CLIENT-SATURATED")
	}
	if p.Schedule.Saturation != "" {
		f = append(f, "SATURATED")
	}
	if p.Incomplete {
		f = append(f, "INCOMPLETE")
	}
	if p.Tokens.CoalescedShare() > result.MaxCoalescedShare {
		f = append(f, "ITL-COALESCED")
	}
	if len(f) == 0 {
		return ""
	}
	return "  " + strings.Join(f, " ") // after the last column, unaligned
}

// queueNote prints the queue derived from the client's side where the
// engine's waiting gauge is known not to see all of it, or where the
// derived queue is well above the gauge: a waiting_peak of 1 beside
// thousands of requests queued would mislead without it.
func queueNote(p result.Point) string {
	q := p.Queue
	if q == nil {
		return ""
	}
	waiting, hasGauge := p.Server["waiting_peak"]
	above := q.Scrapes > 0 && q.HeldPeak > waiting+max(2, 0.1*q.HeldPeak)
	if q.GaugeBlind == "" && !above {
		return ""
	}
	var parts []string
	if q.Scrapes > 0 {
		parts = append(parts, fmt.Sprintf("up to %s of this client's requests held by the server without running (requests in flight minus the server's running gauge, at %d metrics scrapes)", Plain(q.HeldPeak, 4), q.Scrapes))
	}
	if q.WaitMsMean > 0 {
		parts = append(parts, fmt.Sprintf("%.2f ms mean before the server began a prompt (client TTFT minus the server's own prompt time)", q.WaitMsMean))
	}
	if len(parts) == 0 {
		return ""
	}
	line := "queue: " + strings.Join(parts, "; ")
	switch {
	case q.GaugeBlind != "" && hasGauge:
		line += fmt.Sprintf(". The server's waiting_peak (%s) is not the whole queue: %s", Plain(waiting, 4), q.GaugeBlind)
	case above && hasGauge:
		line += fmt.Sprintf(". The server's waiting gauge read at most %s at those scrapes: requests held outside its waiting queue (in its HTTP layer, tokenizing, or in transit) are in no gauge, and a scrape sees its own instant only", Plain(waiting, 4))
	}
	return line
}

// Notes explain flags and errors under the table.
func Notes(p result.Point) []string { return NotesSent(p, nil) }

// NotesSent is Notes knowing what the requests asked beyond the workload
// (the file's Sent), which names some causes surely.
func NotesSent(p result.Point, sent *result.Sent) []string {
	var n []string
	if v := p.Validity; v != nil {
		// Whether the figures describe the server leads: without it they
		// describe this machine.
		if len(v.Invalid) > 0 {
			n = append(n, "INVALID, did not measure the server (judges nothing): "+strings.Join(v.Invalid, "; "))
		}
		for i, why := range v.Reruns {
			n = append(n, fmt.Sprintf("attempt %d discarded and measured again: %s", i+1, why))
		}
	}
	if sc := p.Schedule; sc.ClientSaturated {
		line := "client could not keep the schedule: " + sc.Reason
		if p.Validity != nil && p.Valid() {
			// The flag's 10 ms is stricter than what voids a trial: say
			// which side of that line this one is, so it is not read as
			// a verdict withheld.
			line += " (within what voids a trial: the figures stand, and the latencies from the intended send include the lateness)"
		}
		n = append(n, line)
	} else if sc.CapWaits > 0 && sc.ScheduledRate > 0 && sc.SendRate < 0.95*sc.ScheduledRate {
		// Not the client's doing, but the load offered was not the
		// schedule's: a reader of the row must know.
		n = append(n, fmt.Sprintf("the suite's max_concurrency held back %d sends: the server, at that cap, took %.3g of %.3g req/s scheduled (its limit, not this client's; latencies from the intended send include the wait)", sc.CapWaits, sc.SendRate, sc.ScheduledRate))
	}
	if s := p.Schedule.Saturation; s != "" {
		n = append(n, "SATURATED, stopped early: "+s)
	}
	if line := overloadNote(p); line != "" {
		n = append(n, line)
	}
	kinds := make([]string, 0, len(p.Requests.Errors))
	for k := range p.Requests.Errors {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		n = append(n, fmt.Sprintf("%d × %s, last: %s", p.Requests.Errors[k], k, p.Requests.LastError[k]))
	}
	if st := p.Structured; st != nil {
		line := fmt.Sprintf("structured answers: %.1f%% correct (%d of %d checked against the schema)", 100*st.Rate, st.Correct, st.Checked)
		if tt := p.Latency[metric.TTFTTool]; tt.Count > 0 {
			line += fmt.Sprintf("; first tool-call delta p50 %s p99 %s", Ms(tt.P50), Ms(tt.P99))
		}
		n = append(n, line)
	}
	if b := p.Batch; b != nil {
		n = append(n, fmt.Sprintf("embeddings: %s vectors/s, %s prompt tok/s; inputs per request mean %.1f, p50 %.0f, max %.0f",
			Plain(p.Throughput.Embeddings, 4), Plain(p.Throughput.TotalTokens, 4), b.Mean, b.P50, b.Max))
	}
	for _, name := range slices.Sorted(maps.Keys(p.Models)) {
		m := p.Models[name]
		n = append(n, fmt.Sprintf("model %s: %d requests (%.1f%%), %d failed, %s out tok/s, TTFT p50 %s p99 %s, TPOT p50 %s p99 %s",
			name, m.Requests.Sent, 100*float64(m.Requests.Sent)/float64(max(p.Requests.Sent, 1)), m.Requests.Failed, Plain(m.Throughput.OutputTokens, 4),
			Ms(m.Latency[metric.TTFT].P50), Ms(m.Latency[metric.TTFT].P99), Ms(m.Latency[metric.TPOT].P50), Ms(m.Latency[metric.TPOT].P99)))
	}
	if len(p.Server) > 0 {
		keys := make([]string, 0, len(p.Server))
		for k := range p.Server {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + " " + Plain(p.Server[k], 4)
			if q := p.Queue; k == "waiting_peak" && q != nil && q.GaugeBlind != "" {
				parts[i] += " (not the whole queue: see queue)"
			}
		}
		n = append(n, "server: "+strings.Join(parts, ", ")+serverFrom[p.ServerFrom])
	}
	if line := queueNote(p); line != "" {
		n = append(n, line)
	}
	if len(p.Telemetry) > 0 {
		keys := slices.Sorted(maps.Keys(p.Telemetry))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + " " + Plain(p.Telemetry[k], 4)
		}
		line := "telemetry: " + strings.Join(parts, ", ")
		if e := p.EnergyPerOutputToken; e > 0 {
			line += "; " + Plain(e, 3) + " J per output token"
		}
		n = append(n, line)
	}
	if c := p.Cost; c != nil && c.Energy != "" {
		n = append(n, "cost's energy priced at "+c.Energy)
	}
	if r := p.Requests; r.Attempts > 0 && r.Sent > 0 {
		line := fmt.Sprintf("retries: %d attempts for %d requests (amplification %.2f), %d gave up", r.Attempts, r.Sent, float64(r.Attempts)/float64(r.Sent), r.GaveUp)
		if u := p.Latency[metric.E2EUser]; u.Count > 0 {
			line += fmt.Sprintf("; user-perceived TTFT p99 %s, E2E p99 %s", Ms(p.Latency[metric.TTFTUser].P99), Ms(u.P99))
		}
		n = append(n, line)
	}
	if r := p.PrefixCacheReset; strings.HasPrefix(r, "not reset") {
		n = append(n, "prefix cache "+r)
	}
	if a := p.Requests.Abandoned; a > 0 {
		n = append(n, fmt.Sprintf("%d streams abandoned by the workload's users (cancel), not counted as answers or errors", a))
	}
	if o := p.Overhead; o != nil {
		n = append(n, fmt.Sprintf("TTFT mean %.2f ms at the client, %.2f ms at the server: %.2f ms of network, gateway and client",
			p.Latency[metric.TTFT].Mean, p.Latency[metric.TTFT].Mean-o.TTFTMeanMs, o.TTFTMeanMs))
	}
	if st := p.ServerTimings; st != nil {
		line := fmt.Sprintf("server timings (%d requests): prompt %.2f ms mean, %.2f ms per output token", st.Requests, st.PromptMsMean, st.TPOTMsMean)
		if ttft := p.Latency[metric.TTFT]; ttft.Count > 0 {
			line += fmt.Sprintf("; client TTFT mean %.2f ms, so %.2f ms of queue, network and client", ttft.Mean, ttft.Mean-st.PromptMsMean)
		}
		n = append(n, line)
	}
	n = append(n, answerNotes(p, sent)...)
	return n
}

// busyShare is how far the requests sent, or the answers' worth of
// tokens streamed, may outrun the answers that ended in the window before
// a note explains the gap: in a steady state they agree within the
// window's edges. busyAnswers is the least gap, in requests, worth a
// note: a short point's one or two requests straddling the window's end
// are not an overload.
const (
	busyShare   = 1.25
	busyAnswers = 10
)

// overloadNote explains a row whose req/s tells another story than the
// sent/s and out tok/s beside it: req/s counts answers that ended in the
// window, out tok/s every token streamed in it, so past the server's
// capacity, with requests queued and long answers still streaming when
// the window closed, "req/s 2.00" sits beside 21.88 sent/s and "740
// tok/s" (7.9 answers' worth). It says nothing where the point's median
// request outlasted the window: the run's own note says so.
func overloadNote(p result.Point) string {
	secs, sent, done := p.Window.Seconds, p.Schedule.SendRate, p.Throughput.Requests
	tok, per := p.Throughput.OutputTokens, p.Tokens.Output.Mean
	if secs <= 0 {
		return ""
	}
	// ahead: rate outran the answers by a share and by enough requests;
	// less, by the failed ones, which ended without being answers.
	ahead := func(rate, less float64) bool { return rate > busyShare*done && (rate-done)*secs-less >= busyAnswers }
	queued := ahead(sent, float64(p.Requests.Failed))
	streaming := per > 0 && ahead(tok/per, 0)
	if !queued && !streaming {
		return ""
	}
	if e2e := p.Latency[metric.E2E].P50 / 1000; e2e > secs {
		return ""
	}
	line := fmt.Sprintf("req/s %.2f counts answers that ended in the %s s window; %.2f/s were sent", done, Plain(secs, 3), sent)
	if per > 0 && tok > 0 {
		line += fmt.Sprintf(" and out tok/s %.0f is %.2f answers' worth", tok, tok/per)
	}
	if queued {
		line += ": past capacity, the rest queued or still streaming when it closed"
	} else {
		line += ": long answers still streaming when it closed"
	}
	if p.Schedule.Saturation != "" && p.Requests.Canceled > 0 {
		line += fmt.Sprintf(" (%d cut short by the early stop, in neither)", p.Requests.Canceled)
	}
	return line
}

// CapacityString describes a capacity search's outcome in a line.
func CapacityString(c *result.Capacity) string {
	var s string
	switch c.Bound {
	case "below-min":
		return fmt.Sprintf("below %g req/s: the SLOs fail at the search's minimum (%d probe)", c.Failing, c.Probes)
	case result.CapacityInconclusive:
		return "INCONCLUSIVE: " + c.Why
	case "at-least-max":
		s = fmt.Sprintf("at least %g req/s: the SLOs hold at the search's maximum", c.Rate)
	default:
		s = fmt.Sprintf("%g req/s (fails at %g; %d probes)", c.Rate, c.Failing, c.Probes)
	}
	if c.Offered > 0 && c.Offered < c.Rate {
		// Lead with what was shown to the server, not the probe's name.
		s = fmt.Sprintf("%g req/s offered (the probe at %g req/s drew fewer arrivals than its rate, beyond noise: no more is proven); ", c.Offered, c.Rate) + s
	}
	s += fmt.Sprintf(", %.0f output tok/s", c.OutputThroughput)
	if c.Cost != nil && c.Cost.PerMOutput > 0 {
		s += fmt.Sprintf(", $%.2f per 1M output tokens", c.Cost.PerMOutput)
	}
	return s
}

// pointNotes are the points' notes, each under its point; a note that
// every point of several has, word for word, is said once for them all
// (a cost's fixed power, the engine's quirk), where it would otherwise
// repeat down the page.
func pointNotes(f *result.File) []string {
	per := make([][]string, len(f.Points))
	count := map[string]int{}
	for i, p := range f.Points {
		per[i] = NotesSent(p, f.Sent)
		seen := map[string]bool{}
		for _, n := range per[i] {
			if !seen[n] {
				seen[n] = true
				count[n]++
			}
		}
	}
	all := func(n string) bool { return len(f.Points) > 1 && count[n] == len(f.Points) }
	var out, shared []string
	for i, p := range f.Points {
		for _, n := range per[i] {
			switch {
			case !all(n):
				out = append(out, fmt.Sprintf("  %s: %s", OneLine(p.Label), OneLine(n)))
			case i == 0:
				shared = append(shared, "  every point: "+OneLine(n))
			}
		}
	}
	return append(shared, out...)
}

// SimulatedNote says, for a run on a simulated profile whose interval is
// known, that its figures are the simulator's and how far a real
// server's fall from them ("" otherwise).
func SimulatedNote(f *result.File) string {
	sp := f.Target.Sim
	if sp == nil || sp.Interval == nil {
		return ""
	}
	iv := sp.Interval
	n := fmt.Sprintf("simulated (%s): every figure is the simulator's, not a measurement; a real server's lies within ×%.2f–%.2f of a latency here and ×%.2f–%.2f of a throughput, in %.0f%% of cases (%s)",
		OneLine(sp.Name), iv.Latency[0], iv.Latency[1], iv.Throughput[0], iv.Throughput[1], 100*iv.Level, OneLine(iv.Basis))
	if f.Capacity != nil {
		// A server k times slower serves the twin's rate over k with every
		// latency k times longer, so under fixed SLO thresholds it holds
		// them at a rate lower still: the figures' interval gives none.
		n += fmt.Sprintf("; the capacity has no interval: a server %.2f times slower holds fixed SLO thresholds only below 1/%.2f of this rate", iv.Latency[1], iv.Latency[1])
	}
	return n
}
