package sim

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/structured"
)

// A schema's numbers do not size what the simulator builds (F13: one POST
// whose tool carried minLength 4e9 killed a standalone benchci sim): the
// answer is cut at structured.MaxInstanceBytes, marked with the error, and
// costs megabytes at most.
func TestStructuredAnswerIsBounded(t *testing.T) {
	var params any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"s":{"type":"string","minLength":4e9}}}`), &params); err != nil {
		t.Fatal(err)
	}
	tools := []toolDef{{Type: "function"}}
	tools[0].Function.Name, tools[0].Function.Parameters = "f", params
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ans, ok := planStructured(tools, "required", nil)
	runtime.ReadMemStats(&after)
	if !ok || ans.tool != "f" || !errors.Is(ans.err, structured.ErrTooLarge) || ans.text == "" || len(ans.text) > structured.MaxInstanceBytes {
		t.Fatalf("answer %q (%d bytes), %v, %v", ans.text[:min(len(ans.text), 40)], len(ans.text), ans.err, ok)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("planning the answer allocated %d bytes", alloc)
	}
	// Refused before a byte: still a non-empty answer (a wrong-format
	// fault cuts one character off it).
	format := &responseFormat{Type: "json_schema", JSONSchema: &struct {
		Name   string `json:"name"`
		Schema any    `json:"schema"`
	}{Name: "f", Schema: map[string]any{"type": "array", "minItems": 1e300}}}
	if ans, ok := planStructured(nil, nil, format); !ok || ans.err == nil || ans.text == "" {
		t.Errorf("answer %q, %v", ans.text, ans.err)
	}
}

// Over HTTP: the request is refused with a 400 naming the bound, as an
// engine refuses a schema it cannot constrain, and the simulator serves
// the next.
func TestStructuredHugeSchemaOverHTTP(t *testing.T) {
	p, _ := Lookup("tiny")
	_, u := startServer(t, p)
	for _, min := range []string{"4e9", "2e9", "1e300"} {
		code, out := post(t, u+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":50,
			"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"s":{"type":"string","minLength":`+min+`}}}}}],"tool_choice":"required"}`)
		if code != 400 || !strings.Contains(out, "an answer may have") {
			t.Errorf("minLength %s: HTTP %d: %.300s", min, code, out)
		}
	}
	code, out := post(t, u+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":5}`)
	if code != 200 {
		t.Errorf("the next request: HTTP %d: %s", code, out)
	}
}

// FuzzPlanStructured: no schema in a request makes planning its answer
// panic, leave it empty, or pass the bound.
func FuzzPlanStructured(f *testing.F) {
	f.Add(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	f.Add(`{"type":"string","minLength":4e9}`)
	f.Add(`{"type":"array","items":{"type":"array","items":{"type":"string","minLength":262144}},"minItems":4096}`)
	f.Add(`{"anyOf":[]}`)
	f.Fuzz(func(t *testing.T, schema string) {
		var params any
		if json.Unmarshal([]byte(schema), &params) != nil {
			return
		}
		tools := []toolDef{{Type: "function"}}
		tools[0].Function.Name, tools[0].Function.Parameters = "f", params
		ans, ok := planStructured(tools, "required", nil)
		if !ok || ans.text == "" || len(ans.text) > structured.MaxInstanceBytes {
			t.Fatalf("answer of %d bytes, %v", len(ans.text), ok)
		}
	})
}
