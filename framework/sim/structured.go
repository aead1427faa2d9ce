package sim

import (
	"encoding/json"
	"sort"
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
// ("" for a JSON answer) and the JSON text.
type structuredAnswer struct {
	tool string
	text string
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
				b, _ := json.Marshal(instance(t.Function.Parameters, 0))
				return structuredAnswer{tool: name, text: string(b)}, true
			}
		}
	}
	if format != nil && format.Type == "json_schema" && format.JSONSchema != nil {
		b, _ := json.Marshal(instance(format.JSONSchema.Schema, 0))
		return structuredAnswer{text: string(b)}, true
	}
	if format != nil && format.Type == "json_object" {
		return structuredAnswer{text: `{}`}, true
	}
	return structuredAnswer{}, false
}

// instance builds a value of a JSON Schema: every property of an object
// (required or not), one item of an array (or minItems), an enum's or a
// const's first value, a union's first branch, and for scalars a value
// within their bounds. It covers the schemas tool definitions use; what it
// does not know it answers with a string.
func instance(schema any, depth int) any {
	s, ok := schema.(map[string]any)
	if !ok || depth > 16 {
		return "x"
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return instance(alts[0], depth+1)
		}
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
	}
	num := func(key string, def float64) float64 {
		if v, ok := s[key].(float64); ok {
			return v
		}
		return def
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = instance(props[k], depth+1)
		}
		return out
	case "array":
		n := max(1, int(num("minItems", 1)))
		items := make([]any, n)
		for i := range items {
			items[i] = instance(s["items"], depth+1)
		}
		return items
	case "integer":
		return int64(max(num("minimum", 1), num("exclusiveMinimum", 0)+1))
	case "number":
		return max(num("minimum", 1.5), num("exclusiveMinimum", 0)+0.5)
	case "boolean":
		return true
	case "null":
		return nil
	}
	n := max(1, int(num("minLength", 5)))
	b := make([]byte, n)
	for i := range b {
		b[i] = "simulated"[i%9]
	}
	return string(b)
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
