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
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(doc.Result); err != nil {
			b.Fatal(err)
		}
	}
}
