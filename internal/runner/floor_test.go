package runner

import (
	"fmt"
	"strings"
	"testing"
)

// A chat template of 46 tokens: prompts asked shorter than one word in it
// cannot be honoured. The calibration measures that floor, the run says
// what share of its requests ask for less, and each point records the
// lengths asked beside those the server counted.
func TestPromptsBelowTheChatTemplate(t *testing.T) {
	t.Parallel()
	srv := tokenizerServer(t, 46, 1, true)
	f := runSource(t, "floor.jsonnet", fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'floor',
  target: b.target.url('%s', model='m'),
  workload: { input_tokens: b.dist.uniform(16, 112), output_tokens: b.dist.fixed(1) },
  sweep: b.sweep.concurrency([2], requests=60, warmup='0s', duration='0s'),
}`, srv.URL))
	c := f.Calibration
	if c == nil || c.MinPromptTokens != 47 || c.Overhead < 45.5 || c.Overhead > 46.5 {
		t.Fatalf("calibration %+v: want one word in the 46-token template, 47", c)
	}
	// This server counts every other prompt exactly (46 + one per word),
	// so the prompts its usage finds off are those asked below 47.
	tk := f.Points[0].Tokens
	below := float64(tk.PromptMismatch) / float64(tk.Prompt.Count)
	if below < 0.15 {
		t.Fatalf("only %d of %d requests below: the test needs some", tk.PromptMismatch, tk.Prompt.Count)
	}
	want := fmt.Sprintf("%.0f%% of requests ask for fewer prompt tokens than the shortest prompt this server takes (47 tokens", 100*below)
	if notes := strings.Join(f.Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("notes:\n%s\nwant %q", notes, want)
	}
	if a := tk.PromptAsked; a == nil || a.Count != 60 || a.Min != 16 || tk.Prompt.Min != 47 || !(tk.Prompt.Mean > a.Mean) {
		t.Errorf("prompt tokens asked %+v, counted %+v: want the suite's 16 and up beside the server's 47 and up", tk.PromptAsked, tk.Prompt)
	}
}
