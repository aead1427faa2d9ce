package sim

import (
	"encoding/json"

	"github.com/benchci/benchci/internal/structured"
)

// The simulator answers structured requests as a constrained decoder
// would: a request with tools and a tool_choice naming one streams a call
// of it, and one with a json_schema response_format streams JSON text;
// either way the JSON is an instance of the schema (see instance), cut
// into about four characters a token. With Faults.WrongStructuredRate, a
// share of the answers are cut one character short: no longer JSON, as a
// model that failed the format.

type toolDef struct {
	Type     string `json:"type"`
	Function struct {
		Name       string `json:"name"`
		Parameters any    `json:"parameters"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string `json:"name"`
		Schema any    `json:"schema"`
	} `json:"json_schema"`
}

// structuredAnswer is what a structured request gets: the tool called
// ("" for a JSON answer) and the JSON text. Err is set when the schema's
// answer would pass structured.Instance's bounds (a minLength of 4e9, a
// nesting 100 deep): the text then runs on, as a constrained decoder's
// would, to structured.MaxInstanceBytes, where it stops, not JSON; the
// server cuts it at max_tokens with finish_reason "length", as a model's
// that ran out of room.
type structuredAnswer struct {
	tool string
	text string
	err  error
}

// planStructured returns the request's structured answer, if it asks for
// one: a forced tool call (tool_choice naming a function, or "required"
// with one tool) or a json_schema response format.
func planStructured(tools []toolDef, choice any, format *responseFormat) (structuredAnswer, bool) {
	if len(tools) > 0 {
		name := ""
		switch c := choice.(type) {
		case map[string]any:
			if f, ok := c["function"].(map[string]any); ok {
				name, _ = f["name"].(string)
			}
		case string:
			if c == "required" {
				name = tools[0].Function.Name
			}
		}
		for _, t := range tools {
			if t.Function.Name == name && name != "" {
				a := instance(t.Function.Parameters)
				a.tool = name
				return a, true
			}
		}
	}
	if format != nil && format.Type == structured.JSONSchema && format.JSONSchema != nil {
		return instance(format.JSONSchema.Schema), true
	}
	if format != nil && format.Type == "json_object" {
		return structuredAnswer{text: `{}`}, true
	}
	return structuredAnswer{}, false
}

// instance is the answer to a schema (see structured.Instance): built
// within its bounds whatever the schema's numbers say, so one request
// cannot make the simulator allocate gigabytes.
func instance(schema any) structuredAnswer {
	b, err := structured.Instance(schema)
	if err != nil {
		// What was built, then a string that never ends, to the bound.
		b = append(b, '"')
		for len(b) < structured.MaxInstanceBytes {
			b = append(b, "simulated"[len(b)%9])
		}
	}
	return structuredAnswer{text: string(b), err: err}
}

// pieces cuts JSON text into n pieces of about equal length, each escaped
// for a JSON string.
func pieces(text string, n int) []string {
	r := []rune(text)
	n = max(1, min(n, len(r)))
	out := make([]string, n)
	for i := range n {
		b, _ := json.Marshal(string(r[i*len(r)/n : (i+1)*len(r)/n]))
		out[i] = string(b[1 : len(b)-1])
	}
	return out
}
