package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Bounds on an instance of a schema. A schema comes from a suite or from
// a request to the simulator, and its numbers are not to be trusted: a
// minLength of 4e9 would otherwise be a 4 GB string. Every constraint is
// checked against these before anything is built from it, and the text is
// built within MaxInstanceBytes, so no schema costs more than that.
const (
	// MaxInstanceBytes bounds an instance's JSON text: 256 KiB, about
	// 64k tokens, far above any tool call's arguments or JSON answer.
	MaxInstanceBytes = 256 << 10
	// MaxDepth bounds the nesting of objects, arrays and combinators
	// (anyOf, oneOf, allOf) followed.
	MaxDepth = 32
	// MaxProperties bounds the properties of one object schema.
	MaxProperties = 1024
	// MaxItems bounds the items of one array (its minItems).
	MaxItems = 4096
)

// ErrTooLarge is returned for a schema whose instance would pass a bound.
var ErrTooLarge = errors.New("the schema's answer would be too large")

// Instance returns the JSON text of a value of schema (a decoded JSON
// value): every property of an object (required or not), minItems items
// of an array (at least one, at most maxItems), an enum's or a const's
// first value, a union's first branch, and for scalars a value within
// their bounds (a string of minLength characters, 5 when not given, at
// most maxLength). It covers the schemas tool definitions use; what it
// does not know it answers with a string.
//
// A schema that nests deeper than MaxDepth, has an object of more than
// MaxProperties properties or an array of more than MaxItems items, or
// whose instance would be longer than MaxInstanceBytes is refused with an
// error wrapping ErrTooLarge; the text is then what was built before the
// bound, cut short (possibly empty).
func Instance(schema any) ([]byte, error) {
	g := gen{}
	err := g.value(schema, 0)
	return g.b.Bytes(), err
}

type gen struct {
	b bytes.Buffer
	// path is where in the schema the generator is, as JSON pointer
	// segments: written out only in an error.
	path []string
}

// at is the schema location being built, as a JSON pointer ("/" for the
// root).
func (g *gen) at() string {
	if len(g.path) == 0 {
		return "/"
	}
	return "/" + strings.Join(g.path, "/")
}

// in runs f with the generator one step further into the schema.
func (g *gen) in(f func() error, segs ...string) error {
	n := len(g.path)
	g.path = append(g.path, segs...)
	err := f()
	g.path = g.path[:n]
	return err
}

// room fails when n more bytes would pass MaxInstanceBytes.
func (g *gen) room(n float64, what func() string) error {
	if left := MaxInstanceBytes - g.b.Len(); n > float64(left) {
		return fmt.Errorf("schema at %s: %s makes an answer longer than the %d KiB it may be: %w", g.at(), what(), MaxInstanceBytes>>10, ErrTooLarge)
	}
	return nil
}

func (g *gen) write(p []byte) error {
	if err := g.room(float64(len(p)), func() string { return "the answer so far" }); err != nil {
		return err
	}
	g.b.Write(p)
	return nil
}

// num reads a numeric keyword: ok is false when it is absent or not a
// finite number.
func num(s map[string]any, key string) (float64, bool) {
	var v float64
	switch n := s[key].(type) {
	case float64:
		v = n
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		v = f
	case int:
		v = float64(n)
	case int64:
		v = float64(n)
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// count reads a count keyword (minLength, minItems, ...) as an int of at
// most limit, failing above it: the float is compared before it is
// converted, so 4e9 or 1e300 never becomes an int.
func (g *gen) count(s map[string]any, key string, limit int) (int, bool, error) {
	v, ok := num(s, key)
	if !ok {
		return 0, false, nil
	}
	if v > float64(limit) {
		return 0, false, fmt.Errorf("schema at %s: %s %v is more than the %d an answer may have: %w", g.at(), key, v, limit, ErrTooLarge)
	}
	return max(0, int(math.Ceil(v))), true, nil
}

func (g *gen) value(schema any, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("schema at %s: nests deeper than %d levels: %w", g.at(), MaxDepth, ErrTooLarge)
	}
	s, ok := schema.(map[string]any)
	if !ok {
		return g.write([]byte(`"x"`))
	}
	if c, ok := s["const"]; ok {
		return g.in(func() error { return g.literal(c) }, "const")
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return g.in(func() error { return g.literal(e[0]) }, "enum", "0")
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return g.in(func() error { return g.value(alts[0], depth+1) }, k, "0")
		}
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
	}
	switch typ {
	case "object":
		return g.object(s, depth)
	case "array":
		return g.array(s, depth)
	case "integer":
		return g.integer(s)
	case "number":
		return g.number(s)
	case "boolean":
		return g.write([]byte("true"))
	case "null":
		return g.write([]byte("null"))
	}
	return g.str(s)
}

// literal writes a const or enum value as it is.
func (g *gen) literal(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("schema at %s: %v", g.at(), err)
	}
	return g.write(b)
}

func (g *gen) object(s map[string]any, depth int) error {
	props, _ := s["properties"].(map[string]any)
	if len(props) > MaxProperties {
		return fmt.Errorf("schema at %s: %d properties, more than the %d an object may have: %w", g.at(), len(props), MaxProperties, ErrTooLarge)
	}
	// Every property costs at least its quoted name, a colon and a byte
	// of value: a schema that cannot fit is refused before any is built.
	need := 2.0
	for k := range props {
		need += float64(len(k) + 4)
	}
	if err := g.room(need, func() string { return fmt.Sprintf("%d properties", len(props)) }); err != nil {
		return err
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	g.b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			if err := g.write([]byte{','}); err != nil {
				return err
			}
		}
		name, _ := json.Marshal(k)
		if err := g.write(append(name, ':')); err != nil {
			return err
		}
		if err := g.in(func() error { return g.value(props[k], depth+1) }, "properties", escapePointer(k)); err != nil {
			return err
		}
	}
	return g.write([]byte{'}'})
}

func (g *gen) array(s map[string]any, depth int) error {
	n, _, err := g.count(s, "minItems", MaxItems)
	if err != nil {
		return err
	}
	n = max(1, n)
	if hi, ok := num(s, "maxItems"); ok && hi < float64(n) {
		n = max(0, int(hi))
	}
	// Two bytes of brackets and at least two an item.
	if err := g.room(2+2*float64(n), func() string { return fmt.Sprintf("minItems %d", n) }); err != nil {
		return err
	}
	g.b.WriteByte('[')
	item := func() error { return g.value(s["items"], depth+1) }
	for i := range n {
		if i > 0 {
			if err := g.write([]byte{','}); err != nil {
				return err
			}
		}
		if err := g.in(item, "items"); err != nil {
			return err
		}
	}
	return g.write([]byte{']'})
}

func (g *gen) integer(s map[string]any) error {
	lo, ok := num(s, "minimum")
	if !ok {
		lo = 1
	}
	ex, _ := num(s, "exclusiveMinimum")
	v := max(math.Ceil(lo), math.Floor(ex)+1)
	if hi, ok := num(s, "maximum"); ok && v > hi {
		v = math.Floor(hi)
	}
	if hi, ok := num(s, "exclusiveMaximum"); ok && v >= hi {
		v = math.Ceil(hi) - 1
	}
	// Written out in digits, never converted to an int: a minimum of
	// 1e300 is an integer of 301 digits, not an overflow.
	return g.write(strconv.AppendFloat(nil, v, 'f', -1, 64))
}

func (g *gen) number(s map[string]any) error {
	lo, ok := num(s, "minimum")
	if !ok {
		lo = 1.5
	}
	ex, _ := num(s, "exclusiveMinimum")
	v := max(lo, ex+0.5)
	if hi, ok := num(s, "maximum"); ok && v > hi {
		v = hi
	}
	if hi, ok := num(s, "exclusiveMaximum"); ok && v >= hi {
		v = hi - 0.5
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		v = 0
	}
	b, _ := json.Marshal(v) // finite
	return g.write(b)
}

func (g *gen) str(s map[string]any) error {
	n := 5
	lo, given, err := g.count(s, "minLength", MaxInstanceBytes)
	if err != nil {
		return err
	}
	if given {
		n = max(1, lo)
	}
	if hi, ok := num(s, "maxLength"); ok && hi < float64(n) {
		n = max(0, int(hi))
	}
	if err := g.room(float64(n+2), func() string { return fmt.Sprintf("a string of %d characters", n) }); err != nil {
		return err
	}
	g.b.WriteByte('"')
	for i := range n {
		g.b.WriteByte("simulated"[i%9])
	}
	g.b.WriteByte('"')
	return nil
}

// escapePointer escapes a property name for a JSON pointer.
func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
