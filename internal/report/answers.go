package report

import (
	"fmt"
	"strings"

	"github.com/benchci/benchci/framework/result"
)

// answerNotes explain how a point's answers ended where that shapes its
// figures: answers of no content (kept out of TTFT and TPOT), usages not
// believed, and output lengths other than asked, each by its cause, so
// that a hint names what happened rather than guessing at it. sent is
// what the requests asked beyond the workload (nil: not known).
func answerNotes(p result.Point, sent *result.Sent) []string {
	var n []string
	t := p.Tokens
	if t.UsageRejected > 0 {
		n = append(n, fmt.Sprintf("%d answers' usage claimed more tokens than their streams could carry (by their bytes and chunks, and by their time on engines that drop tokens of no valid text): not believed, their text was counted instead", t.UsageRejected))
	}
	if t.EmptyAnswers > 0 {
		line := fmt.Sprintf("%d answers carried no content", t.EmptyAnswers)
		if t.EmptyKinds == nil {
			// Files before the kinds timed these answers' TTFT to their
			// finish, and did not record why they ended.
			line += " (this file does not record why they ended): counted as answers of no text"
		} else {
			line += ": " + byKind(t.EmptyKinds, emptyWords, sent) + "; they have no first token, so no TTFT or TPOT: they count in E2E and are kept out of those percentiles"
		}
		n = append(n, line)
	}
	if t.OneRead > 0 {
		n = append(n, fmt.Sprintf("%d answers' tokens all came in one read: the time between them was not seen, so they give no TPOT sample (TPOT is of the other %d answers)",
			t.OneRead, max(p.Requests.Completed-t.OneRead, 0)))
	}
	if t.OutputMismatch > 0 {
		line := fmt.Sprintf("%d requests returned a different output length than requested", t.OutputMismatch)
		switch rest := t.OutputMismatch - sum(t.MismatchKinds); {
		case t.MismatchKinds == nil:
			line += " (does the server honour ignore_eos/min_tokens?)"
		default:
			line += ": " + byKind(t.MismatchKinds, mismatchWords, sent)
			if rest > 0 {
				line += fmt.Sprintf("; %d embeddings answers with another number of vectors than inputs", rest)
			}
		}
		n = append(n, line)
	}
	return n
}

// emptyWords and mismatchWords say what each finish kind means for an
// answer of no content, and for one of another length than asked.
var (
	emptyWords = map[string]string{
		"end_token":      "%d ended on the model's end token first",
		"stop_sequence":  "%d ended on a stop sequence the suite asked for",
		"stop":           "%d ended on the end token or a stop sequence (the server does not say which)",
		"length":         "%d were cut at max_tokens by tokens that decode to no valid text (partial UTF-8, special tokens)",
		"content_filter": "%d were withheld by the server's content filter",
		"tool_calls":     "%d ended on a tool call of no arguments",
		"unknown":        "%d ended with no or an unknown finish_reason",
	}
	mismatchWords = map[string]string{
		"end_token":      "%d ended on the model's end token",
		"stop_sequence":  "%d ended on a stop sequence the suite asked for, shorter by design",
		"stop":           "%d ended on the end token or a stop sequence (the server does not say which)",
		"length":         "%d reached max_tokens yet were counted another length (a count by this client's tokenizer, where the server gave no usage, or a server that cut them elsewhere)",
		"content_filter": "%d were withheld by the server's content filter",
		"tool_calls":     "%d ended on a tool call",
		"unknown":        "%d ended with no or an unknown finish_reason (does the server honour ignore_eos/min_tokens?)",
	}
)

// byKind lists counts by finish kind in the kinds' order, each in its
// words; an end token is qualified by whether ignore_eos was sent, which
// says whether the server was asked to pass it.
func byKind(counts map[string]int, words map[string]string, sent *result.Sent) string {
	var parts []string
	for _, k := range result.FinishKinds {
		c := counts[k]
		if c == 0 {
			continue
		}
		part := fmt.Sprintf(words[k], c)
		if k == "end_token" && sent != nil {
			if sent.IgnoreEOS {
				part += " though ignore_eos was sent: the server does not honour it"
			} else {
				part += " (ignore_eos was not sent)"
			}
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// serverFrom qualifies the server's figures where their counters did not
// start with the measured window: read from the point's start, they count
// the warm-up's requests too, and say so. Over the window, as they should
// be, they say nothing.
var serverFrom = map[string]string{
	"point": " (counters from the point's start: the warm-up's requests included, as the server could not be read when the window started)",
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
