package report

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// Each note names what the streams showed: an empty answer is not said to
// be the end token's when a stop sequence or max_tokens ended it, and the
// ignore_eos question is not asked of answers that ended on the stop
// sequences the suite asked for, or is answered where ignore_eos was sent.
func TestAnswerNotesByCause(t *testing.T) {
	t.Parallel()
	point := func(tk result.Tokens) result.Point {
		var p result.Point
		p.Tokens = tk
		return p
	}
	for _, tc := range []struct {
		name      string
		tokens    result.Tokens
		sent      *result.Sent
		want, not []string
	}{
		{"stop sequences asked for, ignore_eos honoured", result.Tokens{
			EmptyAnswers: 3, EmptyKinds: map[string]int{"stop_sequence": 3}, Finish: map[string]int{"stop_sequence": 40},
			OutputMismatch: 40, MismatchKinds: map[string]int{"stop_sequence": 40}}, &result.Sent{IgnoreEOS: true},
			[]string{"3 answers carried no content: 3 ended on a stop sequence the suite asked for; they have no first token, so no TTFT or TPOT",
				"40 requests returned a different output length than requested: 40 ended on a stop sequence the suite asked for, shorter by design"},
			[]string{"end token", "honour ignore_eos"}},
		{"length cut with no decodable text", result.Tokens{
			EmptyAnswers: 2802, EmptyKinds: map[string]int{"length": 2802}}, &result.Sent{IgnoreEOS: true},
			[]string{"2802 answers carried no content: 2802 were cut at max_tokens by tokens that decode to no valid text"},
			[]string{"end token", "honour"}},
		{"end token under ignore_eos", result.Tokens{
			EmptyAnswers: 1, EmptyKinds: map[string]int{"end_token": 1}, OutputMismatch: 5, MismatchKinds: map[string]int{"end_token": 5}}, &result.Sent{IgnoreEOS: true},
			[]string{"5 ended on the model's end token though ignore_eos was sent: the server does not honour it"}, nil},
		{"end token where ignore_eos was not sent (Ollama)", result.Tokens{
			EmptyAnswers: 2, EmptyKinds: map[string]int{"end_token": 2}, OutputMismatch: 5, MismatchKinds: map[string]int{"end_token": 4, "length": 1}}, &result.Sent{},
			[]string{"2 answers carried no content: 2 ended on the model's end token first (ignore_eos was not sent)",
				"5 requests returned a different output length than requested: 4 ended on the model's end token (ignore_eos was not sent), 1 reached max_tokens yet were counted another length"},
			[]string{"does not honour", "does the server honour"}},
		{"no finish reason", result.Tokens{OutputMismatch: 2, MismatchKinds: map[string]int{"unknown": 2}}, nil,
			[]string{"2 ended with no or an unknown finish_reason (does the server honour ignore_eos/min_tokens?)"}, nil},
		{"a file before the kinds", result.Tokens{EmptyAnswers: 4, OutputMismatch: 4}, nil,
			[]string{"4 answers carried no content (this file does not record why they ended)",
				"4 requests returned a different output length than requested (does the server honour ignore_eos/min_tokens?)"},
			[]string{"end token"}},
		{"usage not believed", result.Tokens{UsageRejected: 7}, nil,
			[]string{"7 answers' usage claimed more tokens than their streams could carry"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(NotesSent(point(tc.tokens), tc.sent), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("notes lack %q:\n%s", w, got)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("notes say %q:\n%s", w, got)
				}
			}
		})
	}
}

// Server counters that include the warm-up say so; over the measured
// window, as they should be, they say nothing more.
func TestServerNoteNamesWarmup(t *testing.T) {
	t.Parallel()
	for _, from := range []string{"", "window", "point"} {
		p := result.Point{Server: map[string]float64{"generation_tokens": 14248}, ServerFrom: from}
		got := strings.Join(Notes(p), "\n")
		if warm := strings.Contains(got, "server: generation_tokens 14248 (counters from the point's start: the warm-up's requests included"); warm != (from == "point") {
			t.Errorf("server_from %q: notes\n%s", from, got)
		}
	}
}
