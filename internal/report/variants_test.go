package report

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/variants"
)

// sampleVariants is a comparison of three variants: a winner, one below
// it for real, and one whose run failed.
func sampleVariants() *variants.Report {
	curve := func(scale float64) []variants.Figures {
		var out []variants.Figures
		for _, r := range []float64{4, 8, 12} {
			out = append(out, variants.Figures{Point: "rate=" + Num(r), Offered: r, OpenLoop: true, RequestsPS: r,
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

func TestVariantsGolden(t *testing.T) {
	t.Parallel()
	var text, md strings.Builder
	if err := Write(&text, "text", Variants(sampleVariants())); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/variants.golden", text.String())
	if err := VariantsMarkdown(&md, sampleVariants()); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/variants.md.golden", md.String())
	// The answer leads; the failed variant is said, escaped, and unranked.
	if !strings.HasPrefix(strings.SplitN(text.String(), "\n", 3)[1], "capacity: fp8 has the highest capacity") ||
		!strings.Contains(md.String(), `tp\|2 is incomplete`) {
		t.Errorf("text:\n%s\nmarkdown:\n%s", text.String(), md.String())
	}
}

// The markdown chart leaves out a rate where a variant's probe was stopped
// as saturated (xychart can only join it into the line, as a collapse),
// and says so under the chart.
func TestVariantsMarkdownLeavesOutSaturated(t *testing.T) {
	t.Parallel()
	r := sampleVariants()
	r.Variants[0].Curve[2].Saturated = true // bf16 at 12 req/s
	var md strings.Builder
	if err := VariantsMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{`x-axis "req/s" ["4", "8"]`, "    line [400, 800]\n", "    line [520, 1040]\n",
		"Left out: 12 req/s, where a probe was stopped as saturated"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// A variant whose SLO verdicts were all inconclusive did not pass them,
// and a capacity of 0 is no rate held, not a rate 100% below the leader.
func TestVariantCellsSayWhatHappened(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    variants.Variant
		want string
	}{
		{variants.Variant{SLOs: []string{"ttft p99 < 500ms"}}, "pass"},
		{variants.Variant{SLOs: []string{"ttft p99 < 500ms"}, SLOInconclusive: 1}, "1 inconclusive"},
		{variants.Variant{SLOs: []string{"ttft p99 < 500ms"}, SLOInconclusive: 1, SLOFailures: []string{"x"}}, "1 failed"},
		{variants.Variant{}, "-"},
	} {
		if got := SLOCell(tc.v); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, tc.want)
		}
	}
	r := &variants.Report{Verdicts: []variants.Verdict{{Question: "capacity", Best: "a", Standings: []variants.Standing{
		{Variant: "a", Value: 20, Unit: "req/s"}, {Variant: "b", Value: 0, Unit: "req/s", VsLeader: -1, Real: true}, {Variant: "c", Value: 15, Unit: "req/s", VsLeader: -0.25, Real: true}}}}}
	for name, want := range map[string]string{"a": "best capacity", "b": "held none of the rates tried", "c": "-25% capacity vs a, real"} {
		if got := Standing(r, variants.Variant{Name: name, Complete: true}); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
