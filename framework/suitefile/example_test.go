package suitefile_test

import (
	"fmt"
	"log"

	"github.com/benchci/benchci/framework/suitefile"
)

// Load a suite file: Jsonnet is evaluated with the embedded library,
// defaults applied and every field checked; the hashes identify the suite
// and the requests it sends.
func ExampleLoad() {
	f, err := suitefile.Load("testdata/good/minimal.jsonnet", suitefile.Options{})
	if err != nil {
		log.Fatal(err) // every problem, each at its file:line:col
	}
	s := f.Suite
	fmt.Println(s.Name, s.Target.Kind, s.Sweep.Kind, s.Sweep.Rates, s.Sweep.Duration.D())
	fmt.Println(len(f.WorkloadHash), "hex digits of workload hash")
	// Output:
	// minimal sim rate [1 2] 30s
	// 64 hex digits of workload hash
}

// A mistake is reported where it was written, with a suggestion.
func ExampleLoadSource() {
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'typo',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([1]) { warmpu: '1s' },
}`
	_, err := suitefile.LoadSource("typo.jsonnet", src, suitefile.Options{})
	fmt.Println(err)
	// Output:
	// typo.jsonnet: 1 problem(s):
	//   typo.jsonnet:6:31: sweep.warmpu: unknown field (did you mean "warmup"?)
}
