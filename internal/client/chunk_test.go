package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// refChunk is the reference reading of a chunk with encoding/json.
type refChunk struct {
	Choices []struct {
		Text         *string         `json:"text"`
		FinishReason *string         `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"`
		MatchedStop  json.RawMessage `json:"matched_stop"`
		Delta        *struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Timings *struct {
		PromptMs    float64 `json:"prompt_ms"`
		PredictedMs float64 `json:"predicted_ms"`
		PredictedN  int     `json:"predicted_n"`
	} `json:"timings"`
}

func (r refChunk) view() chunkView {
	var c chunkView
	if len(r.Error) > 0 && string(r.Error) != "null" {
		c.errText = "set"
		return c
	}
	kinds := map[string]FinishKind{"stop": FinishStop, "eos": FinishEndToken, "eos_token": FinishEndToken, "end_turn": FinishEndToken,
		"stop_sequence": FinishStopSequence, "length": FinishLength, "max_tokens": FinishLength, "content_filter": FinishContentFilter,
		"tool_calls": FinishToolCalls, "function_call": FinishToolCalls}
	for _, ch := range r.Choices {
		c.choices = true
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			c.finished = true
			c.finish = kinds[*ch.FinishReason]
			if c.finish == "" {
				c.finish = FinishUnknown
			}
			c.stop = stopUnsaid
			for _, raw := range []json.RawMessage{ch.StopReason, ch.MatchedStop} {
				var s string
				switch {
				case raw == nil:
				case json.Unmarshal(raw, &s) == nil && s != "":
					c.stop = stopSequence
				case c.stop == stopUnsaid:
					c.stop = stopNone
				}
			}
		}
		if ch.Text != nil {
			c.answer += *ch.Text
		}
		if d := ch.Delta; d != nil {
			if d.Content != nil {
				c.answer += *d.Content
			}
			if d.ReasoningContent != nil {
				c.reasoning += *d.ReasoningContent
			} else if d.Reasoning != nil {
				c.reasoning += *d.Reasoning
			}
		}
	}
	if r.Usage != nil {
		c.hasUsage, c.promptTokens, c.outputTk = true, max(r.Usage.PromptTokens, 0), max(r.Usage.CompletionTokens, 0)
	}
	if r.Timings != nil {
		c.hasTimings, c.promptMs, c.predictedMs, c.predictedN = true, r.Timings.PromptMs, r.Timings.PredictedMs, r.Timings.PredictedN
	}
	return c
}

var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
	`{"choices":[{"text":" a\u00e9\n","finish_reason":"length"}],"usage":null}`,
	`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`,
	`{"choices":[{"delta":{"reasoning_content":"hmm"}},{"delta":{"reasoning":"x","content":"y"}}]}`,
	`{"error":{"message":"boom","code":500}}`,
	`{"error":null,"choices":[{"delta":{"content":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop","stop_reason":"\n\n"}]}`,
	`{"choices":[{"index":0,"text":"","finish_reason":"stop","stop_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","matched_stop":128009}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"weird"}]}`,
	`{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"usage":{"completion_tokens":16,"prompt_tokens":128,"total_tokens":144},"timings":{"prompt_n":128,"prompt_ms":41.5,"predicted_n":16,"predicted_ms":160.2,"predicted_per_second":99.9}}`,
}

// FuzzParseChunk checks the fast parser against encoding/json on every
// input encoding/json accepts with the expected types.
func FuzzParseChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var p fastjson.Parser
		got, err := parseChunk(&p, []byte(in))
		var ref refChunk
		if json.Unmarshal([]byte(in), &ref) != nil {
			return // invalid or other types: encoding/json has no reading to compare
		}
		if strings.ToLower(in) != in {
			// encoding/json matches keys case-insensitively ("usAge" for
			// "usage"); the fast parser, like the servers, does not.
			return
		}
		if err != nil {
			// fastjson is stricter on a few inputs encoding/json takes
			// (invalid UTF-8 is replaced there); a malformed-chunk error is
			// an acceptable reading of those.
			return
		}
		want := ref.view()
		if got.errText != "" {
			got.errText = "set"
		}
		if got != want {
			t.Fatalf("parseChunk(%s) = %+v, encoding/json reads %+v", in, got, want)
		}
	})
}

func BenchmarkParseChunk(b *testing.B) {
	data := []byte(chunkSeeds[0])
	b.Run("fastjson", func(b *testing.B) {
		var p fastjson.Parser
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseChunk(&p, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r refChunk
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
