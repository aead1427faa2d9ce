package runner

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// Structured requests against a simulator that spoils a quarter of its
// structured answers: the correctness rate counts three in four, a tool
// call's first delta is timed, and an SLO can hold the rate.
func TestStructuredCorrectness(t *testing.T) {
	for _, kind := range []string{"tool_call", "json_schema"} {
		t.Run(kind, func(t *testing.T) {
			f := runSource(t, filepath.Join(t.TempDir(), "st.jsonnet"), fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'st',
  target: b.target.sim('tiny', max_num_seqs=64, faults={ wrong_structured_rate: 0.25 }),
  workload: {
    input_tokens: b.dist.fixed(16), output_tokens: b.dist.fixed(64),
    structured: {
      kind: '%s', name: 'get_weather',
      schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 },
                                              units: { enum: ['metric', 'imperial'] } },
                required: ['city', 'days'], additionalProperties: false },
    },
  },
  sweep: b.sweep.rates([100], duration='10s', warmup='0s', requests=400),
  slos: [b.slo.rate('structured_correct_rate', '>=', 0.5)],
}`, kind))
			p := f.Points[0]
			st := p.Structured
			if st == nil || st.Checked != p.Requests.Completed || p.Requests.Completed < 350 {
				t.Fatalf("structured %+v, requests %+v", st, p.Requests)
			}
			// 400 answers: the rate's standard error is 0.022, so 0.08 is
			// over 3.5 of them.
			if math.Abs(st.Rate-0.75) > 0.08 {
				t.Errorf("correct rate %.3f (%d of %d), the simulator spoils 25%%", st.Rate, st.Correct, st.Checked)
			}
			if got := p.Latency["ttft_tool"].Count; (kind == "tool_call") != (got == int64(p.Requests.Completed)) {
				t.Errorf("ttft_tool over %d requests of %d", got, p.Requests.Completed)
			}
			// A machine that stalled through every rerun (two CPU hogs on two
			// cores) leaves the SLO inconclusive, with the evidence: the rate
			// is still the answers', and the verdict is withheld, not failed.
			if len(f.SLOs) != 1 || f.SLOs[0].Measured != st.Rate || !f.SLOs[0].Pass && !f.SLOs[0].Inconclusive {
				t.Errorf("SLO %+v", f.SLOs)
			} else if f.SLOs[0].Inconclusive {
				t.Logf("the trial was inconclusive on this machine: %s", f.SLOs[0].Note)
			}
			if p.Tokens.OutputMismatch != 0 {
				t.Errorf("%d answers flagged for their length: a structured answer ends when complete", p.Tokens.OutputMismatch)
			}
		})
	}
}
