package result

import (
	"encoding/json"
	"os"
	"testing"
)

// BenchmarkParseCommitted reads the committed quickstart baseline's
// result (4 points, 10 histograms each), every histogram decoded and its
// summary recomputed: what verifying costs a small file.
//
//	go test -run XXX -bench ParseCommitted ./framework/result
func BenchmarkParseCommitted(b *testing.B) {
	data := committedResultBytes(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// committedResultBytes is the committed quickstart baseline's result.
func committedResultBytes(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile("testdata/quickstart-v1.json")
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		b.Fatal(err)
	}
	return doc.Result
}

// BenchmarkBoundsBesideParse prices the two checks that bound every file
// (its shape before decoding, every number after) beside the whole read,
// on the same file, in one run:
//
//	go test -run XXX -bench BoundsBesideParse ./framework/result
func BenchmarkBoundsBesideParse(b *testing.B) {
	data := committedResultBytes(b)
	f, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("shape", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := CheckShape(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("numbers", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := checkNumbers(f); err != nil {
				b.Fatal(err)
			}
		}
	})
}
