// Package structured checks structured answers: a tool call's arguments or
// a JSON answer against the JSON Schema the request carried, so a run can
// report how often the server answered correctly beside how fast.
package structured

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kinds of structured requests.
const (
	// ToolCall sends the schema as a function's parameters and forces the
	// call (tool_choice); the arguments are checked.
	ToolCall = "tool_call"
	// JSONSchema sends it as response_format; the answer's text is checked.
	JSONSchema = "json_schema"
)

// Checker holds a compiled schema.
type Checker struct {
	Kind, Name string
	schema     *jsonschema.Schema
}

// Compile compiles schema (a decoded JSON object) for kind and name. A
// schema whose answer cannot be built within the bounds of Instance (a
// minLength of 2e9, a nesting 100 deep) is refused: no server answers it
// within a context, and the simulator would not try.
func Compile(kind, name string, schema any) (*Checker, error) {
	if kind != ToolCall && kind != JSONSchema {
		return nil, fmt.Errorf("kind %q: want %s or %s", kind, ToolCall, JSONSchema)
	}
	sch, err := CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	if _, err := Instance(schema); err != nil {
		return nil, err
	}
	return &Checker{Kind: kind, Name: name, schema: sch}, nil
}

// CompileSchema compiles a JSON Schema given as a decoded JSON value. No
// reference outside it is fetched.
func CompileSchema(schema any) (*jsonschema.Schema, error) {
	if _, ok := schema.(map[string]any); !ok {
		return nil, fmt.Errorf("the schema must be a JSON object, got %T", schema)
	}
	// Through the library's decoder, so numbers keep their exact form.
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %s", oneLine(err))
	}
	return sch, nil
}

// schemaURL names the schema inside the compiler; nothing is fetched.
const schemaURL = "urn:benchci:schema"

// oneLine keeps a validation error's findings ("at '/properties/n/type':
// value must be one of ...") on one line, without the branches that only
// say that a combinator failed.
func oneLine(err error) string {
	var keep []string
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimLeft(strings.TrimSpace(l), "- ")
		if l == "" || strings.HasSuffix(l, "failed") || strings.Contains(l, "is not valid against metaschema") || strings.HasPrefix(l, "got ") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) == 0 {
		return strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return strings.Join(keep, "; ")
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s; only references within it are followed", url)
}

// Check reports whether an answer is correct: for a tool call, that the
// named function was called with arguments that parse and match the
// schema; for a JSON answer, that its text does.
func (c *Checker) Check(toolName string, args, text []byte) bool {
	doc := text
	if c.Kind == ToolCall {
		if toolName != c.Name {
			return false
		}
		doc = args
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return false
	}
	return c.schema.Validate(v) == nil
}
