package structured

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// The instance of a schema tool definitions use is valid against it.
func TestInstanceMatchesItsSchema(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}},"required":["city","days"],"additionalProperties":false}`,
		`{"type":"object","properties":{"code":{"type":"string","minLength":3,"maxLength":3},"tags":{"type":"array","items":{"type":"string","maxLength":2},"minItems":2,"maxItems":4}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":-10,"maximum":-5},"x":{"type":"number","exclusiveMaximum":1},"e":{"enum":["a","b"]},"c":{"const":{"k":[1,2]}}}}`,
		`{"type":"object","properties":{"u":{"anyOf":[{"type":"null"},{"type":"string"}]},"b":{"type":["boolean","null"]},"s":{"type":"string","minLength":0,"maxLength":0}}}`,
		`{"type":"array","items":{"type":"object","properties":{"a~b/c":{"type":"integer","exclusiveMinimum":10}}},"minItems":3}`,
		`{"type":"object","properties":{"big":{"type":"integer","minimum":1e300},"small":{"type":"integer","maximum":-1e300},"f":{"type":"number","minimum":1e308}}}`,
	} {
		schema := decode(t, s)
		b, err := Instance(schema)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		c, err := Compile(JSONSchema, "f", schema)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !c.Check("", nil, b) {
			t.Errorf("%s: instance %s does not match", s, b)
		}
	}
}

// Every constraint is bounded before anything is built from it: the
// numbers of a hostile schema (F13: minLength 2e9 crashed a run, 4e9 a
// standalone simulator) are refused, or the text is cut at its bound,
// and what the refusal allocates is small whatever they say.
func TestInstanceRefusesHugeSchemas(t *testing.T) {
	deep := `{"type":"string"}`
	for range 100 {
		deep = `{"type":"array","items":` + deep + `}`
	}
	var props []string
	for i := range MaxProperties + 1 {
		props = append(props, `"p`+strings.Repeat("x", i%7)+string(rune('a'+i%26))+`_`+itoa(i)+`":{"type":"boolean"}`)
	}
	wide := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"minLength 2e9", `{"type":"object","properties":{"s":{"type":"string","minLength":2e9}}}`, "minLength 2e+09"},
		{"minLength 4e9 at the top", `{"type":"string","minLength":4e9}`, "minLength 4e+09"},
		{"minLength 1e300", `{"type":"string","minLength":1e300}`, "minLength 1e+300"},
		{"minItems 4e9", `{"type":"array","items":{"type":"integer"},"minItems":4e9}`, "minItems 4e+09"},
		{"a string just over the bound", `{"type":"string","minLength":262143}`, "longer than the 256 KiB"},
		{"nested past the depth", deep, "nests deeper than 32"},
		{"too many properties", wide, "1025 properties"},
		{"items times properties times lengths", `{"type":"array","minItems":4096,"items":{"type":"object","properties":{"a":{"type":"string","minLength":1000},"b":{"type":"string","minLength":1000}}}}`, "longer than the 256 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := decode(t, tc.schema)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b, err := Instance(schema)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Instance = %d bytes, %v; want an error saying %q", len(b), err, tc.want)
			}
			if len(b) > MaxInstanceBytes {
				t.Errorf("%d bytes built, more than the bound %d", len(b), MaxInstanceBytes)
			}
			// The buffer grows to the bound at most (its doublings add up
			// to a few times it), plus names and errors: megabytes, not
			// the gigabytes asked for.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*MaxInstanceBytes {
				t.Errorf("allocated %d bytes", alloc)
			}
			if _, err := Compile(ToolCall, "f", schema); err == nil {
				t.Errorf("Compile accepted the schema")
			}
		})
	}
	_, err := Instance(decode(t, `{"type":"string","minLength":4e9}`))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("%v does not wrap ErrTooLarge", err)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// FuzzInstance: no schema makes Instance panic or pass its bound, and an
// instance it accepts is JSON.
func FuzzInstance(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}}}`,
		`{"type":"string","minLength":4e9}`,
		`{"type":"array","minItems":1e300,"items":{"type":"array","minItems":4096}}`,
		`{"type":"integer","minimum":-1e300,"maximum":1e300}`,
		`{"type":"number","exclusiveMinimum":1.7976931348623157e308}`,
		`{"anyOf":[{"oneOf":[{"allOf":[{"const":"x"}]}]}]}`,
		`{"type":["array"],"items":{"enum":[null]},"minItems":-5,"maxItems":-1}`,
		`true`, `[]`, `"x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var schema any
		if json.Unmarshal([]byte(s), &schema) != nil {
			return
		}
		b, err := Instance(schema)
		if len(b) > MaxInstanceBytes {
			t.Fatalf("%d bytes", len(b))
		}
		if err == nil && !json.Valid(b) {
			t.Fatalf("instance %q of %s is not JSON", b, s)
		}
	})
}
