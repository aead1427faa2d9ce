package result

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
)

// checkNumbers walks f's decoded fields: every real number finite and
// within ±metric.MaxValue (but the free-form gauges of maps of reals),
// every integer (all are counts, sizes, indexes or versions) within 0 and
// MaxCount. It names the first that is not by its JSON path. The checks
// that know a field ask more of it (summaries, throughputs, the
// simulator's constants); this one keeps the fields no check names (a
// schedule's rate, a server's queue time, a calibration's slope) from
// reaching a report as NaN, infinity or a 300-digit figure.
func checkNumbers(f *File) error {
	if path, v := badNumber(reflect.ValueOf(f).Elem()); path != nil {
		slices.Reverse(path)
		return fmt.Errorf("%s is %v: want a finite figure within ±%g, or a count within 0 and %d: %w", strings.TrimPrefix(strings.Join(path, ""), "."), v, metric.MaxValue, MaxCount, ErrInconsistent)
	}
	return nil
}

var timeType = reflect.TypeOf(time.Time{})

// badNumber returns the path to the first bad number below v, innermost
// step first, and the number; nil when there is none. The path is built
// only on the way out of a failure, so a good file allocates nothing.
func badNumber(v reflect.Value) ([]string, any) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return badNumber(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return nil, nil
		}
		t := v.Type()
		for i := range v.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			if path, bad := badNumber(v.Field(i)); path != nil {
				if name := jsonName(t.Field(i)); name != "" {
					path = append(path, "."+name)
				}
				return path, bad
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil, nil // raw JSON (a suite's definition) or bytes
		}
		for i := range v.Len() {
			if path, bad := badNumber(v.Index(i)); path != nil {
				return append(path, fmt.Sprintf("[%d]", i)), bad
			}
		}
	case reflect.Map:
		if k := v.Type().Elem().Kind(); k == reflect.Float64 || k == reflect.Float32 {
			// Gauges a suite or a server names (telemetry, the engine's
			// metrics) in their own units: a machine's 2 TB of memory in
			// bytes is one. JSON holds no NaN or infinity, and the checks
			// that know a gauge bound it.
			return nil, nil
		}
		it := v.MapRange()
		for it.Next() {
			if path, bad := badNumber(it.Value()); path != nil {
				return append(path, fmt.Sprintf("[%q]", it.Key())), bad
			}
		}
	case reflect.Float64, reflect.Float32:
		if x := v.Float(); math.IsNaN(x) || math.Abs(x) > metric.MaxValue {
			return []string{}, x
		}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
		if n := v.Int(); n < 0 || n > MaxCount {
			return []string{}, n
		}
	}
	return nil, nil
}

// jsonName is a field's name in the file; "" for an embedded struct,
// whose fields are its holder's.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" && !f.Anonymous {
		return f.Name
	}
	return name
}
