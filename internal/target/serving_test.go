package target

import (
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
)

// A spec's speculative decoding and disaggregation reach the profile,
// and their mistakes are reported at their fields.
func TestSimSpecServing(t *testing.T) {
	t.Parallel()
	spec := func(f func(s *suite.SimSpec)) *suite.Target {
		s := suite.SimSpec{Model: "llama-3-70b", GPU: "h100-sxm", TP: 4}
		f(&s)
		return &suite.Target{Kind: suite.TargetSim, Spec: &s}
	}
	p, field, err := SimProfile(spec(func(s *suite.SimSpec) {
		s.Speculative = &suite.SimSpeculative{Method: "draft", DraftModel: "llama-3-8b", K: 4, Acceptance: 0.7}
		s.Disaggregated = &suite.SimDisagg{Prefill: suite.SimPool{TP: 2, Instances: 2}, Decode: suite.SimPool{GPU: "h200"}, LinkGBs: 50, LinkLatency: suite.Duration(time.Millisecond)}
	}))
	if err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	if p.Speculative == nil || p.Speculative.K != 4 || p.Speculative.Draft.Name != "llama-3-8b" {
		t.Errorf("speculation %+v", p.Speculative)
	}
	if d := p.Disagg; d == nil || d.Prefill.TP != 2 || d.Prefill.Instances != 2 || d.Decode.GPU.Name != "h200" || d.Decode.TP != 4 || d.LinkGBs != 50 {
		t.Errorf("disaggregation %+v", p.Disagg)
	}
	for _, c := range []struct {
		name, field, want string
		f                 func(s *suite.SimSpec)
	}{
		{"unknown method", "spec.speculative", `method "tree"`, func(s *suite.SimSpec) {
			s.Speculative = &suite.SimSpeculative{Method: "tree", K: 4, Acceptance: 0.7}
		}},
		{"unknown draft", "spec.speculative.draft_model", "unknown card", func(s *suite.SimSpec) {
			s.Speculative = &suite.SimSpeculative{Method: "draft", DraftModel: "llama-1b", K: 4, Acceptance: 0.7}
		}},
		{"acceptance", "spec.speculative", "acceptance 7", func(s *suite.SimSpec) {
			s.Speculative = &suite.SimSpeculative{Method: "eagle", K: 4, Acceptance: 7}
		}},
		{"no link", "spec.disaggregated", "link_gbs", func(s *suite.SimSpec) {
			s.Disaggregated = &suite.SimDisagg{}
		}},
		{"bad pool card", "spec.disaggregated.decode.gpu", "unknown card", func(s *suite.SimSpec) {
			s.Disaggregated = &suite.SimDisagg{Decode: suite.SimPool{GPU: "b200x"}, LinkGBs: 10}
		}},
		{"written card field", "spec.disaggregated.prefill.gpu", "card", func(s *suite.SimSpec) {
			s.Disaggregated = &suite.SimDisagg{Prefill: suite.SimPool{GPU: map[string]any{"name": "x", "hbm": 3}}, LinkGBs: 10}
		}},
	} {
		_, field, err := SimProfile(spec(c.f))
		if err == nil || field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: field %q, error %v; want %q saying %q", c.name, field, err, c.field, c.want)
		}
	}
}
