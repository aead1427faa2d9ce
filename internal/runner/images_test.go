package runner

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/benchci/benchci/internal/sim"
)

// A multimodal conversation resends its earlier turns' images with the
// history, so the server charges them on every later turn, and no turn's
// prompt count is taken for a mismatch. With turns: 'every' each turn adds
// an image of its own: the second turn then carries two.
func TestMultiTurnSessionsResendImages(t *testing.T) {
	image := float64(sim.ImageTokens(1024, 768))
	for _, tc := range []struct {
		turns   string
		perTurn float64 // images the last turn's prompt holds
	}{{"first", 1}, {"every", 2}} {
		t.Run(tc.turns, func(t *testing.T) {
			f := runSource(t, filepath.Join(t.TempDir(), "mm.jsonnet"), fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'mm',
  target: b.target.sim('tiny'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.fixed(16), output_tokens: b.dist.fixed(4),
    prompts: { kind: 'multi_turn', turns: 2, think_time: '0s' },
    images: { sizes: [{ width: 1024, height: 768 }], turns: '%s' },
  },
  sweep: b.sweep.rates([5], duration='1s', warmup='0s'),
}`, tc.turns))
			for _, p := range f.Points {
				tok := p.Tokens
				if tok.Prompt.Count == 0 || tok.PromptMismatch != 0 {
					t.Fatalf("%s: %d prompts, %d taken for a mismatch", p.Label, tok.Prompt.Count, tok.PromptMismatch)
				}
				// Every turn carries the first image; the last turn all of them.
				if tok.Prompt.Min < image || tok.Prompt.Max < tc.perTurn*image {
					t.Errorf("%s: prompts of %.0f to %.0f tokens; want every one above an image's %.0f and the longest above %.0f",
						p.Label, tok.Prompt.Min, tok.Prompt.Max, image, tc.perTurn*image)
				}
				if tok.Prompt.Max >= (tc.perTurn+1)*image {
					t.Errorf("%s: a prompt of %.0f tokens holds more than %.0f images", p.Label, tok.Prompt.Max, tc.perTurn)
				}
			}
		})
	}
}
