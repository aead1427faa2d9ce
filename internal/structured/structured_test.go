package structured

import (
	"strings"
	"testing"
)

var weather = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city": map[string]any{"type": "string"},
		"days": map[string]any{"type": "integer", "minimum": 1},
	},
	"required":             []any{"city", "days"},
	"additionalProperties": false,
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tool, err := Compile(ToolCall, "get_weather", weather)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := Compile(JSONSchema, "forecast", weather)
	for _, tc := range []struct {
		name       string
		c          *Checker
		tool, text string
		want       bool
	}{
		{"a good call", tool, "get_weather", `{"city": "Oslo", "days": 3}`, true},
		{"another function", tool, "get_time", `{"city": "Oslo", "days": 3}`, false},
		{"a required field missing", tool, "get_weather", `{"city": "Oslo"}`, false},
		{"a wrong type", tool, "get_weather", `{"city": "Oslo", "days": "3"}`, false},
		{"below the minimum", tool, "get_weather", `{"city": "Oslo", "days": 0}`, false},
		{"cut short", tool, "get_weather", `{"city": "Oslo", "days": 3`, false},
		{"a good JSON answer", answer, "", `{"city": "Oslo", "days": 3}`, true},
		{"an extra field", answer, "", `{"city": "Oslo", "days": 3, "x": 1}`, false},
		{"prose", answer, "", `Sure! {"city": "Oslo", "days": 3}`, false},
	} {
		args, text := []byte(tc.text), []byte(nil)
		if tc.c.Kind == JSONSchema {
			args, text = nil, []byte(tc.text)
		}
		if got := tc.c.Check(tc.tool, args, text); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind   string
		schema any
		want   string
	}{
		{ToolCall, "object", "must be a JSON object"},
		{ToolCall, map[string]any{"type": "integr"}, "value must be one of"},
		{ToolCall, map[string]any{"$ref": "https://example.com/s.json"}, "only references within it"},
		{"function", weather, "kind"},
	} {
		if _, err := Compile(tc.kind, "f", tc.schema); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.schema, err, tc.want)
		}
	}
}

// FuzzCheck: no answer makes the check panic.
func FuzzCheck(f *testing.F) {
	c, err := Compile(ToolCall, "get_weather", weather)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"city": "Oslo", "days": 3}`))
	f.Add([]byte(`[1, {"a": null}]`))
	f.Fuzz(func(t *testing.T, args []byte) {
		c.Check("get_weather", args, nil)
	})
}
