package shard

import (
	"reflect"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// mergedElsewhere are the fields of the counted structs that are not counts,
// each merged by hand in mergeMeasured. A new field of another kind than a
// count fails TestCountsMergedOrNamed until it is merged and named here.
var mergedElsewhere = map[string][]string{
	"Requests": {"ErrorRate", "LastError", "ClientLimitError"},
	"Tokens":   {"Prompt", "Output", "PerChunk", "PromptAsked"},
}

func TestCountsMergedOrNamed(t *testing.T) {
	for _, v := range []any{result.Requests{}, result.Tokens{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Type.Kind() == reflect.Int || isCountMap(f.Type) {
				continue
			}
			if !contains(mergedElsewhere[typ.Name()], f.Name) {
				t.Errorf("%s.%s (%v) is not a count: merge it in mergeMeasured and name it in mergedElsewhere", typ.Name(), f.Name, f.Type)
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Every count of two shards, each field set to its own value, adds up.
func TestAddCountsSumsEveryCount(t *testing.T) {
	for _, v := range []any{&result.Requests{}, &result.Tokens{}} {
		typ := reflect.TypeOf(v).Elem()
		a, b, sum := reflect.New(typ), reflect.New(typ), reflect.New(typ)
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch {
			case f.Type.Kind() == reflect.Int:
				a.Elem().Field(i).SetInt(int64(i + 1))
				b.Elem().Field(i).SetInt(int64(100 * (i + 1)))
			case isCountMap(f.Type):
				a.Elem().Field(i).Set(reflect.ValueOf(map[string]int{"x": 1, "y": 2}))
				b.Elem().Field(i).Set(reflect.ValueOf(map[string]int{"x": 10, "z": 30}))
			}
		}
		addCounts(sum.Interface(), a.Interface())
		addCounts(sum.Interface(), b.Interface())
		for i := range typ.NumField() {
			f := typ.Field(i)
			got := sum.Elem().Field(i)
			switch {
			case f.Type.Kind() == reflect.Int:
				if want := int64(101 * (i + 1)); got.Int() != want {
					t.Errorf("%s.%s = %d, want %d", typ.Name(), f.Name, got.Int(), want)
				}
			case isCountMap(f.Type):
				if want := map[string]int{"x": 11, "y": 2, "z": 30}; !reflect.DeepEqual(got.Interface(), want) {
					t.Errorf("%s.%s = %v, want %v", typ.Name(), f.Name, got.Interface(), want)
				}
			}
		}
	}
}
