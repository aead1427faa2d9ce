package client

import (
	"github.com/valyala/fastjson"
)

// chunkView is what the client reads from one streamed chunk.
type chunkView struct {
	answer, reasoning string
	// hasUsage is set when the chunk carries a usage object.
	hasUsage               bool
	promptTokens, outputTk int
	// errText is the raw error value when the chunk carries a non-null one.
	errText string
	// finished is set when a choice carries a finish_reason; finish is
	// which one, and stop what the server said of a stop sequence.
	finished bool
	choices  bool // the chunk has a choice: a step of the answer
	finish   FinishKind
	stop     stopWord
	// timings are llama.cpp's server-side times, when the chunk has them.
	hasTimings            bool
	promptMs, predictedMs float64
	predictedN            int
	// toolName and toolArgs are a tool call's function name and a piece
	// of its arguments, when the delta carries one.
	toolName, toolArgs string
	toolCall           bool
}

// parseChunk reads a chunk with a reusable fastjson parser: one parse per
// chunk, no reflection and no allocation for the common chunk, which
// matters at thousands of chunks per second (encoding/json was 38% of the
// client's CPU). Fields of an unexpected type read as absent, as a
// lenient client should.
func parseChunk(p *fastjson.Parser, data []byte) (chunkView, error) {
	var c chunkView
	v, err := p.ParseBytes(data)
	if err != nil {
		return c, err
	}
	if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull {
		c.errText = e.String()
		return c, nil
	}
	for _, ch := range v.GetArray("choices") {
		c.choices = true
		if f := ch.Get("finish_reason"); f != nil && f.Type() == fastjson.TypeString && len(f.GetStringBytes()) > 0 {
			c.finished = true
			c.finish = finishOf(f.GetStringBytes())
			c.stop = stopWordOf(ch)
		}
		if t := ch.Get("text"); t != nil && t.Type() == fastjson.TypeString {
			c.answer += string(t.GetStringBytes())
		}
		d := ch.Get("delta")
		if d == nil || d.Type() != fastjson.TypeObject {
			continue
		}
		if t := d.Get("content"); t != nil && t.Type() == fastjson.TypeString {
			c.answer += string(t.GetStringBytes())
		}
		for _, tc := range d.GetArray("tool_calls") {
			c.toolCall = true
			if n := tc.Get("function", "name"); n != nil && n.Type() == fastjson.TypeString {
				c.toolName += string(n.GetStringBytes())
			}
			if a := tc.Get("function", "arguments"); a != nil && a.Type() == fastjson.TypeString {
				c.toolArgs += string(a.GetStringBytes())
			}
		}
		if t := d.Get("reasoning_content"); t != nil && t.Type() == fastjson.TypeString {
			c.reasoning += string(t.GetStringBytes())
		} else if t := d.Get("reasoning"); t != nil && t.Type() == fastjson.TypeString {
			c.reasoning += string(t.GetStringBytes())
		}
	}
	if tm := v.Get("timings"); tm != nil && tm.Type() == fastjson.TypeObject {
		c.hasTimings = true
		c.promptMs = tm.GetFloat64("prompt_ms")
		c.predictedMs = tm.GetFloat64("predicted_ms")
		c.predictedN = tm.GetInt("predicted_n")
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		c.hasUsage = true
		c.promptTokens = max(u.GetInt("prompt_tokens"), 0)
		c.outputTk = max(u.GetInt("completion_tokens"), 0)
	}
	return c, nil
}

// parseEmbeddings reads an embeddings answer: how many vectors its data
// holds, usage.prompt_tokens, and the error value if it carries one.
func parseEmbeddings(data []byte) (n, promptTokens int, errText string, err error) {
	var p fastjson.Parser
	v, err := p.ParseBytes(data)
	if err != nil {
		return 0, 0, "", err
	}
	if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull {
		return 0, 0, string(e.MarshalTo(nil)), nil
	}
	for _, d := range v.GetArray("data") {
		if d.Get("embedding") != nil {
			n++
		}
	}
	return n, max(v.GetInt("usage", "prompt_tokens"), 0), "", nil
}

// stopWord is what a finish chunk said of a stop sequence: vLLM's
// stop_reason and SGLang's matched_stop are the matched string, or null
// (or a token id) when the end token or a stop token ended the answer.
type stopWord uint8

const (
	stopUnsaid   stopWord = iota // the server names no stop sequence either way
	stopNone                     // it said none matched: null, or a stop token's id
	stopSequence                 // it named the string that matched
)

func stopWordOf(ch *fastjson.Value) stopWord {
	said := stopUnsaid
	for _, k := range [...]string{"stop_reason", "matched_stop"} {
		v := ch.Get(k)
		switch {
		case v == nil:
		case v.Type() == fastjson.TypeString && len(v.GetStringBytes()) > 0:
			return stopSequence
		default:
			said = stopNone
		}
	}
	return said
}

// finishOf names a finish_reason without allocating; "stop" is refined
// later by what the request asked and the server said (see finishKind).
func finishOf(b []byte) FinishKind {
	switch string(b) {
	case "stop":
		return FinishStop
	case "eos", "eos_token", "end_turn":
		return FinishEndToken
	case "stop_sequence":
		return FinishStopSequence
	case "length", "max_tokens":
		return FinishLength
	case "content_filter":
		return FinishContentFilter
	case "tool_calls", "function_call":
		return FinishToolCalls
	}
	return FinishUnknown
}
