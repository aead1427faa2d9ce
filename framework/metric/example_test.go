package metric_test

import (
	"fmt"

	"github.com/benchci/benchci/framework/metric"
)

// A figure's key is checked against the catalogue, which says how it is
// measured and judged.
func Example() {
	k, err := metric.ParseKey("ttft.p99")
	if err != nil {
		panic(err)
	}
	d := k.Def()
	fmt.Println(k, d.Unit, d.Better, d.Scope, d.Test)
	_, err = metric.ParseKey("ttfb.p99")
	fmt.Println(err)
	// Output:
	// ttft.p99 ms lower per request percentile intervals
	// unknown figure "ttfb.p99" (did you mean "ttft.p99"?)
}
