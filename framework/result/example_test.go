package result_test

import (
	"fmt"
	"log"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// Read a results file — here one written by the first format version,
// which Read migrates — and look up figures by their catalogue keys.
func ExampleRead() {
	f, err := result.Read("testdata/v1.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Schema, f.Suite.Name, f.Target.Sim.Name, f.Target.Sim.StepBaseMs, "ms step")
	for _, p := range f.Points {
		ttft, _ := p.Value(metric.K(metric.TTFT, "p99"))
		tput, _ := p.Value(metric.K(metric.OutputThroughput, ""))
		fmt.Printf("%s: TTFT P99 %.1f ms, %.1f tok/s\n", p.Label, ttft, tput)
	}
	// Output:
	// benchci.result/v2 quickstart llama3-70b-h100x4 18 ms step
	// rate=2: TTFT P99 111.4 ms, 166.9 tok/s
}
