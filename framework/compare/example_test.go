package compare_test

import (
	"fmt"
	"log"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
)

// Compare a candidate with a baseline: here the same run, with the
// candidate's hardware made 25% dearer, so its cost per token regressed
// while every measured figure is unchanged.
func ExampleCompare() {
	base, err := result.Read("../result/testdata/v1.json")
	if err != nil {
		log.Fatal(err)
	}
	cand, err := result.Read("../result/testdata/v1.json")
	if err != nil {
		log.Fatal(err)
	}
	cand.Points[0].Cost.PerMOutput *= 1.25
	r, err := compare.Compare(base, cand, map[string]string{"default": "10%", "cost": "5%"})
	if err != nil {
		log.Fatal(err)
	}
	for _, row := range r.Rows {
		if row.Verdict != compare.Pass {
			fmt.Printf("%s %s: %.2f -> %.2f %s, %s (%s)\n", row.Point, row.Metric, row.Base, row.Cand, row.Unit, row.Verdict, row.Test)
		}
	}
	fmt.Println("passes:", r.Count(compare.Pass), "gate failed:", r.Failed())
	// Output:
	// rate=2 cost: 16.58 -> 20.72 $/1M out, regression (band only (1 vs 1 trials; need 4 each for a test))
	// passes: 12 gate failed: true
}

// The gate's verdicts on a candidate against the committed baseline, under
// the candidate suite's own tolerances.
func ExampleGate() {
	base, err := compare.ReadReference("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		panic(err)
	}
	r, err := compare.Gate(base, base)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Comparable, r.Failed())
	// Output: true false
}
