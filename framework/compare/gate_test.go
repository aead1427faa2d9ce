package compare

import (
	"encoding/json"
	"testing"

	"github.com/benchci/benchci/framework/metric"
)

// Gate judges with the candidate's own suite's tolerances: a 30% slower
// TTFT fails under the default band and passes under the 50% the
// candidate's suite declares.
func TestGateUsesTheCandidatesTolerances(t *testing.T) {
	t.Parallel()
	base := build(t, spec{labels: []string{"rate=1"}, trials: 1, n: 400, ttft: 100, scale: 1, seed: 1})
	cand := build(t, spec{labels: []string{"rate=1"}, trials: 1, n: 400, ttft: 100, scale: 1.3, seed: 2})
	key := metric.K(metric.TTFT, "p50").String()
	r, err := Gate(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts(r, key)["rate=1"]; v != Regression {
		t.Fatalf("no tolerance declared: %s %v, want regression", key, v)
	}
	def, _ := json.Marshal(map[string]any{"tolerance": map[string]string{"ttft": "50%"}})
	cand.Suite.Definition = def
	if r, err = Gate(base, cand); err != nil {
		t.Fatal(err)
	}
	if v := verdicts(r, key)["rate=1"]; v != Pass {
		t.Errorf("tolerance ttft 50%%: %s %v, want pass", key, v)
	}
	cand.Suite.Definition = json.RawMessage(`{"tolerance": 3}`)
	if _, err := Gate(base, cand); err == nil {
		t.Error("a tolerance that is not a map of bands was accepted")
	}
}
