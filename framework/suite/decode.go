package suite

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/benchci/benchci/internal/didyoumean"
)

// decoder turns evaluated JSON into typed values, collecting every problem
// instead of stopping at the first, because a user fixing a suite wants the
// whole list in one go.
type decoder struct {
	errs []*FieldError
}

func (d *decoder) fail(path, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// decode stores v (as produced by json.Decoder with UseNumber) into dst.
func (d *decoder) decode(path string, v any, dst reflect.Value) {
	if v == nil {
		return // null leaves the default; the library writes null for "not given"
	}
	if dst.CanAddr() && dst.Addr().Type().Implements(textUnmarshaler) {
		s, ok := v.(string)
		if !ok {
			if dst.Type() == reflect.TypeFor[Duration]() {
				d.fail(path, "want a duration string such as \"5s\" or \"500ms\", got %s", jsonKind(v))
			} else {
				d.fail(path, "want a string, got %s", jsonKind(v))
			}
			return
		}
		if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			d.fail(path, "%v", err)
		}
		return
	}
	switch dst.Kind() {
	case reflect.Pointer:
		if dst.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
		}
		d.decode(path, v, dst.Elem())
	case reflect.Interface:
		dst.Set(reflect.ValueOf(plain(v)))
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			d.fail(path, "want a string, got %s", jsonKind(v))
			return
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			d.fail(path, "want a boolean, got %s", jsonKind(v))
			return
		}
		dst.SetBool(b)
	case reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			d.fail(path, "want a number, got %s", jsonKind(v))
			return
		}
		f, err := n.Float64()
		if err != nil {
			d.fail(path, "want a number, got %s", n)
			return
		}
		dst.SetFloat(f)
	case reflect.Int, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			d.fail(path, "want a whole number, got %s", jsonKind(v))
			return
		}
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			d.fail(path, "want a whole number, got %s", n)
			return
		}
		dst.SetInt(int64(f))
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			d.fail(path, "want an array, got %s", jsonKind(v))
			return
		}
		s := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, e := range arr {
			d.decode(fmt.Sprintf("%s[%d]", path, i), e, s.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			d.fail(path, "want an object, got %s", jsonKind(v))
			return
		}
		m := reflect.MakeMapWithSize(dst.Type(), len(obj))
		for _, k := range sortedKeys(obj) {
			e := reflect.New(dst.Type().Elem()).Elem()
			d.decode(JoinPath(path, k), obj[k], e)
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		dst.Set(m)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			d.fail(path, "want an object, got %s", jsonKind(v))
			return
		}
		fields := structFields(dst.Type())
		for _, k := range sortedKeys(obj) {
			i, ok := fields[k]
			if !ok {
				d.fail(JoinPath(path, k), "unknown field%s", didyoumean.Hint(k, slices.Collect(maps.Keys(fields))))
				continue
			}
			d.decode(JoinPath(path, k), obj[k], dst.Field(i))
		}
	default:
		panic(fmt.Sprintf("suite: cannot decode into %s", dst.Type()))
	}
}

// structFields maps JSON names to field indexes.
func structFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}

// JoinPath appends a field to a field path as FieldError paths are written
// ("workload" + "seed" is "workload.seed"); the suitefile locator builds the
// same paths, so an error finds its place in the source.
func JoinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", v)
	case json.Number:
		return "number " + v.String()
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// plain converts json.Number to float64 so free-form values marshal as numbers.
func plain(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = plain(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = plain(v[k])
		}
	}
	return v
}
