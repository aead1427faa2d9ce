package shard

import (
	"fmt"
	"reflect"
)

// addCounts adds every count of src to dst, which point to structs of one
// type: each int field, and each map[string]int key by key. The shards'
// counts of one point add up to the merged point's whatever they count, so
// a count added to result.Requests or result.Tokens later merges as a sum
// without a line here, where a field summed by hand would have merged as
// zero. Fields of other kinds (rates, summaries, names) are the caller's
// to merge; TestCountsMergedOrNamed keeps that list honest.
func addCounts(dst, src any) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	if d.Type() != s.Type() {
		panic(fmt.Sprintf("shard: adding %v counts to %v", s.Type(), d.Type()))
	}
	for i := range d.NumField() {
		df, sf := d.Field(i), s.Field(i)
		switch {
		case df.Kind() == reflect.Int:
			df.SetInt(df.Int() + sf.Int())
		case isCountMap(df.Type()):
			if sf.Len() == 0 {
				continue
			}
			if df.IsNil() {
				df.Set(reflect.MakeMap(df.Type()))
			}
			it := sf.MapRange()
			for it.Next() {
				old := df.MapIndex(it.Key())
				n := it.Value().Int()
				if old.IsValid() {
					n += old.Int()
				}
				df.SetMapIndex(it.Key(), reflect.ValueOf(n).Convert(df.Type().Elem()))
			}
		}
	}
}

func isCountMap(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Int
}
