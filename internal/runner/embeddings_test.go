package runner

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/benchci/benchci/internal/sim"
)

// Embeddings against the simulator: answers are counted as vectors and
// prompt tokens, latency is end to end with no first token, and a batch of
// 16 inputs costs about 15 prompts' prefill more than one.
func TestEmbeddingsBatches(t *testing.T) {
	run := func(batch int) (e2eP50 float64) {
		file := runSource(t, filepath.Join(t.TempDir(), "emb.jsonnet"), fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'emb',
  target: b.target.sim('qwen2.5-7b@l40s'),
  api: 'embeddings',
  workload: { input_tokens: b.dist.fixed(200), batch: b.dist.fixed(%d), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([2], duration='3s', warmup='0s'),
}`, batch))
		p := file.Points[0]
		if p.Requests.Failed > 0 || p.Requests.Completed == 0 {
			t.Fatalf("batch %d: requests %+v", batch, p.Requests)
		}
		if p.Latency["ttft"].Count != 0 || p.Latency["e2e"].Count != int64(p.Requests.Completed) {
			t.Errorf("batch %d: ttft over %d, e2e over %d requests", batch, p.Latency["ttft"].Count, p.Latency["e2e"].Count)
		}
		if p.Batch == nil || p.Batch.Mean != float64(batch) || p.Tokens.Prompt.Mean < float64(200*batch) {
			t.Errorf("batch %d: batch %+v, prompt tokens %+v", batch, p.Batch, p.Tokens.Prompt)
		}
		if got, want := p.Throughput.Embeddings, p.Throughput.Requests*float64(batch); math.Abs(got-want) > 1e-9*want {
			t.Errorf("batch %d: %.3f vectors/s, %.3f requests/s", batch, got, p.Throughput.Requests)
		}
		return p.Latency["e2e"].P50
	}
	one, sixteen := run(1), run(16)
	// Prefill is compute-bound on the card: each of the 15 inputs more
	// adds about one 200-token prefill to the request. The difference is
	// read, not the ratio: the step's fixed overhead and a loaded
	// machine's delays add to both latencies alike.
	prof, err := sim.Resolve("qwen2.5-7b@l40s")
	if err != nil {
		t.Fatal(err)
	}
	per := (sixteen - one) / 15
	price := 200 * float64(prof.PrefillPerToken) / 1e6 // ms
	if per < 0.7*price || per > 2*price {
		t.Errorf("e2e p50 %.1f ms for 16 inputs, %.1f ms for one: %.2f ms an input more, want about a 200-token prefill (%.2f ms; 0.7 to 2 times)", sixteen, one, per, price)
	}
	t.Logf("e2e p50: 1 input %.1f ms, 16 inputs %.1f ms", one, sixteen)
}
