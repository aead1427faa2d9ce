package htmlpage

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/variants"
)

// sampleHTML is the HTML report of the committed quickstart baseline
// gated against itself, with time slices added to its points, a run of
// a suite whose name tries to inject markup, and sampleVariants.
func sampleHTML(t *testing.T) string {
	t.Helper()
	b, err := baseline.Read("../../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	f := b.Result
	for i := range f.Points {
		sl := &result.Slices{WidthS: 1, WindowStartS: 2}
		for k := range 12 {
			sl.Slices = append(sl.Slices, result.Slice{Sent: 5, Finished: 4 + k%2, Completed: 4 + k%2, InFlight: 3 + k, OutputTokPS: 300 + 10*float64(k), TTFTP50Ms: 60, TTFTP99Ms: 110})
		}
		f.Points[i].Slices = sl
	}
	gate, err := compare.Compare(f, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	evil := *f
	evil.Suite.Name = `evil<script>alert(1)</script>`
	evil.Points = f.Points[:1]
	in := Input{
		Runs:     []Run{{File: f, Gate: gate}, {File: &evil, Gate: compare.WithoutBaseline(&evil)}},
		Variants: []*variants.Report{sampleVariants()},
		Tool:     "test", Generated: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC),
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The page leads with the verdict, has every section and chart, escapes
// what runs and servers named, and carries nothing that could run or
// load: no script, and a policy that forbids loading anything.
func TestHTMLReport(t *testing.T) {
	page := sampleHTML(t)
	for _, want := range []string{
		"<!doctype html>",
		`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`,
		`<p class="verdict pass">✅ 0 regressions`,
		"<h3>SLOs</h3>", "<h3>Throughput and latency</h3>", "<h3>Distributions</h3>", "<h3>Points</h3>",
		"<h3>Over time</h3>", "<h3>Provenance</h3>", "<h2>Variants of shootout</h2>",
		"ttft p99 &lt; 500ms @ rate=6", // SLO names are text
		"evil&lt;script&gt;alert(1)&lt;/script&gt;",
		"Output throughput vs load — quickstart", "TTFT distribution per point",
		"rate=20 over time — quickstart",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Error("the page holds a script element")
	}
	// The comparison of variants leads: which one to pick is the page's
	// question, and it sat below every run's sections.
	if v, r := strings.Index(page, "<h2>Variants of shootout</h2>"), strings.Index(page, "<h3>SLOs</h3>"); v < 0 || r < 0 || v > r {
		t.Errorf("the variants comparison (at %d) does not come before the first run (at %d)", v, r)
	}
	// Quickstart: 3 curves, 2 distributions, 4 points' slices; the
	// one-point run: 3, 2 and 1; the variants: throughput, TTFT and TPOT.
	if n := strings.Count(page, "<svg"); n != 9+6+3 {
		t.Errorf("%d inline SVGs, want 18", n)
	}
	for _, banned := range []string{"http://", "https://", "<?xml", "<link", "<iframe", "@import", "url("} {
		if i := strings.Index(page, banned); i >= 0 && !strings.HasPrefix(page[i:], "http://www.w3.org/") && !strings.HasPrefix(page[i:], "http://127.0.0.1:") {
			t.Errorf("the page holds %q: %.80s", banned, page[i:])
		}
	}
}

// sampleVariants is a comparison of three variants: a winner, one below
// it for real, and one whose run failed.
func sampleVariants() *variants.Report {
	curve := func(scale float64) []variants.Figures {
		var out []variants.Figures
		for _, r := range []float64{4, 8, 12} {
			out = append(out, variants.Figures{Point: "rate=" + report.Num(r), Offered: r, OpenLoop: true, RequestsPS: r,
				OutputTokPS: 100 * r * scale, TTFTP99Ms: 80 * r / scale, TPOTP99Ms: 20 + r/scale, USDPerMOutput: 3 / scale, Pass: r < 12*scale})
		}
		return out
	}
	fp8, bf16 := curve(1.3), curve(1)
	return &variants.Report{
		Schema: variants.Schema, Suite: "shootout", WorkloadHash: "0123456789abcdef", Order: "interleaved",
		Variants: []variants.Variant{
			{Name: "bf16", Target: "sim llama3-70b-h100x4", Complete: true, Curve: bf16, Peak: &bf16[2], Knee: "rate=8",
				SLOs: []string{"ttft p90 < 1s"}, SLOFailures: []string{"ttft p90 < 1s @ rate=12: 1200 ms"},
				Capacity: &variants.Capacity{Rate: 8, Failing: 12, Bound: "bracketed", Source: "sweep", At: &bf16[1]}},
			{Name: "fp8", Target: "sim llama3-70b-h100x4", Complete: true, Curve: fp8, Peak: &fp8[2], SLOs: []string{"ttft p90 < 1s"},
				Capacity: &variants.Capacity{Rate: 12, Bound: "at-least-max", Source: "sweep", At: &fp8[2]}},
			{Name: "tp|2", Target: "launch http://127.0.0.1:8000", Error: "the launched server exited during the run", Curve: []variants.Figures{}},
		},
		Verdicts: []variants.Verdict{
			{Question: "capacity", Best: "fp8", Answer: "fp8 has the highest capacity: it holds every SLO up to 12 req/s, +50% against bf16 (8 req/s), beyond noise",
				Standings: []variants.Standing{{Variant: "fp8", Value: 12, Unit: "req/s"}, {Variant: "bf16", Value: 8, Unit: "req/s", VsLeader: -1.0 / 3, Real: true, Test: "at rate=12, ttft p90 < 1s: 700 vs 1200 ms"}}},
			{Question: "cost", Tied: []string{"fp8", "bf16"}, Answer: "tie for the lowest cost at capacity between fp8, bf16",
				Standings: []variants.Standing{{Variant: "fp8", Value: 2.3}, {Variant: "bf16", Value: 3, VsLeader: 0.3, Test: "99% Poisson intervals overlap"}}},
		},
		Frontiers:  []variants.Frontier{{Latency: "ttft.p99", Points: []variants.FrontierPoint{{Variant: "fp8", Point: "rate=4", OutputTokPS: 520, LatencyMs: 246}, {Variant: "fp8", Point: "rate=12", OutputTokPS: 1560, LatencyMs: 738}}}},
		Incomplete: []string{"tp|2"},
		Method:     "how",
	}
}

// A suite whose trials measured the machine judged nothing: its heading
// is never ✅, and the page's headline is not coloured as a pass.
func TestHTMLInconclusiveIsNotAPass(t *testing.T) {
	b, err := baseline.Read("../../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	f := b.Result
	for i := range f.Points {
		f.Points[i].Validity = &result.Validity{Invalid: []string{"the machine stalled 1.20 s in 3 pauses"}}
	}
	gate, err := compare.Compare(f, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !gate.Inconclusive() {
		t.Fatal("the gate of invalid trials is not inconclusive")
	}
	var buf bytes.Buffer
	if err := Write(&buf, Input{Runs: []Run{{File: f, Gate: gate}}, Tool: "test", Generated: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "✅") || !strings.Contains(page, "<h2>⚠️ ") || !strings.Contains(page, `class="verdict warn"`) {
		t.Errorf("an inconclusive suite's page:\n%s", page[:min(len(page), 3000)])
	}
}
