package metric

import (
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "ttft.p99", want: "ttft.p99"},
		{in: "output_throughput", want: "output_throughput"},
		{in: "e2e_sched.p99.9", want: "e2e_sched.p99.9"},
		{in: "ttfb.p99", err: `did you mean "ttft.p99"?`},
		{in: "tpot_p95", err: `did you mean "tpot.p95"?`},
		{in: "ttft", err: "ttft needs a statistic"},
		{in: "error_rate.p99", err: `did you mean "error_rate"?`},
		{in: "bogus", err: `unknown figure "bogus"`},
		{in: "ttft.p42", err: `did you mean "ttft.p50"?`},
	} {
		k, err := ParseKey(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseKey(%q) = %v, %v; want error containing %q", tc.in, k, err, tc.err)
			}
			continue
		}
		if err != nil || k.String() != tc.want {
			t.Errorf("ParseKey(%q) = %v, %v; want %s", tc.in, k, err, tc.want)
		}
	}
}

func TestParseTolerance(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{in: "default"},
		{in: "ttft.p99"},
		{in: "cost"},
		{in: "ttft"},
		{in: "capacity"},
		{in: "ttft_answer", err: `unknown tolerance key "ttft_answer"`},
		{in: "ttfb.p99", err: `did you mean "ttft.p99"?`},
		{in: "tpot_p95", err: `unknown tolerance key "tpot_p95"`},
		{in: "bogus", err: `unknown tolerance key "bogus"`},
		{in: "ttft.p95", err: "not compared by the gate"},
	} {
		_, err := ParseTolerance(tc.in)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseTolerance(%q) = %v, want error %q", tc.in, err, tc.err)
		}
	}
}

// Every gated figure and every SLO metric must be a valid key, and every
// latency must have the percentiles the gate's interval test reads.
func TestCatalogueConsistent(t *testing.T) {
	for _, k := range Gated {
		if err := k.Check(); err != nil {
			t.Errorf("gated %v: %v", k, err)
		}
		if d := k.Def(); d.Kind == Latency {
			if _, ok := Quantile(k.Stat); !ok {
				t.Errorf("gated %v: not a percentile", k)
			}
		}
	}
	seen := map[string]bool{}
	for _, d := range All() {
		if seen[d.Name] {
			t.Errorf("%s defined twice", d.Name)
		}
		seen[d.Name] = true
		if d.Unit == "" || d.Doc == "" || (d.Better != Lower && d.Better != Higher) {
			t.Errorf("%s: incomplete definition %+v", d.Name, d)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"ttft.p99", "default", "cost", "a.b.c", "", ".", "itl.p99.9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		// A parsed key prints back as what was parsed and checks clean.
		if k.String() != s || k.Check() != nil {
			t.Fatalf("ParseKey(%q) = %v, which prints %q", s, k, k.String())
		}
	})
}

func TestKeys(t *testing.T) {
	if ks := Keys("ttft.p99", "cost"); len(ks) != 2 || ks[0] != K(TTFT, "p99") || ks[1] != K(CostPerMOutput, "") {
		t.Errorf("Keys = %v", ks)
	}
	defer func() {
		if recover() == nil {
			t.Error("a misspelt key did not panic")
		}
	}()
	Keys("ttfb.p99")
}
