package runner

import (
	"path/filepath"
	"testing"

	"github.com/benchci/benchci/framework/sim"
)

// A multimodal conversation resends its first turn's image with the
// history, so the server charges the image on every turn, and no turn's
// prompt count is taken for a mismatch.
func TestMultiTurnSessionsResendImages(t *testing.T) {
	f := runSource(t, filepath.Join(t.TempDir(), "mm.jsonnet"), `local b = import 'benchci.libsonnet';
b.suite {
  name: 'mm',
  target: b.target.sim('tiny'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.fixed(16), output_tokens: b.dist.fixed(4),
    prompts: { kind: 'multi_turn', turns: 2, think_time: '0s' },
    images: { sizes: [{ width: 1024, height: 768 }] },
  },
  sweep: b.sweep.rates([5], duration='1s', warmup='0s'),
}`)
	image := float64(sim.ImageTokens(1024, 768))
	for _, p := range f.Points {
		tok := p.Tokens
		if tok.Prompt.Count == 0 || tok.PromptMismatch != 0 {
			t.Fatalf("%s: %d prompts, %d taken for a mismatch", p.Label, tok.Prompt.Count, tok.PromptMismatch)
		}
		// Every turn, the first and the follow-up, carries the image.
		if tok.Prompt.Min < image {
			t.Errorf("%s: a turn's prompt was %.0f tokens, below the image's %.0f: the image was not resent", p.Label, tok.Prompt.Min, image)
		}
	}
}
