package suite_test

import (
	"fmt"

	"github.com/benchci/benchci/framework/suite"
)

// A suite written as plain JSON gets the binary's defaults, and every
// problem is reported by the path of the field that has it.
func ExampleDecode() {
	s, err := suite.Decode([]byte(`{"name": "chat", "target": {"kind": "url", "url": "http://127.0.0.1:8000", "model": "m"},
		"workload": {"input_tokens": {"kind": "fixed", "value": 128}, "output_tokens": {"kind": "fixed", "value": 64}},
		"sweep": {"kind": "rate", "rates": [1, 2]}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, s.API, s.Trials, len(s.Sweep.Rates))

	_, err = suite.Decode([]byte(`{"name": "chat", "target": {"kind": "url", "url": "http://127.0.0.1:8000", "model": "m"},
		"workload": {"input_tokens": {"kind": "fixed", "value": 128}, "output_tokens": {"kind": "fixed", "value": 64}},
		"sweep": {"kind": "rates", "rates": [1]}}`))
	fmt.Println(err)
	// Output:
	// chat chat 1 2
	// 1 error occurred:
	// 	* sweep.kind: unknown sweep kind "rates" (known: rate, concurrency, capacity, auto, throughput)
}
