package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
)

// inputOf is a loaded suite file as Run takes it (the command's runInput).
func inputOf(l *suitefile.File) Input {
	return Input{Suite: l.Suite, Path: l.Path, Definition: l.JSON, Hash: l.Hash, WorkloadHash: l.WorkloadHash}
}

// inputsOf are a suite's variants as RunVariants takes them.
func inputsOf(vs []suitefile.Variant) []Input {
	out := make([]Input, len(vs))
	for i, v := range vs {
		out[i] = inputOf(v.File)
	}
	return out
}

// A results file records the source facts it was given, whether the run
// fails before it starts (a suite with variants given to Run) or a
// variant is never started (a stopped run): Input carries them in place
// of the suite file.
func TestResultsRecordTheInputsSource(t *testing.T) {
	t.Parallel()
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'src',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(2) },
  sweep: b.sweep.rates([1], duration='1s', warmup='0s'),
  variants: { a: {}, b: { target: b.target.sim('tiny', max_num_seqs=2) } },
}`
	l, err := suitefile.LoadSource("src.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, got result.Suite, in Input) {
		t.Helper()
		if got.Path != "src.jsonnet" || got.Path != in.Path || got.Hash != in.Hash || got.WorkloadHash != in.WorkloadHash ||
			string(got.Definition) != string(in.Definition) || got.Name != in.Suite.RunName() || in.Hash == "" || len(in.Definition) == 0 {
			t.Errorf("%s: the file records %+v, not its input's source", what, got)
		}
	}
	f, err := Run(context.Background(), inputOf(l), Options{})
	if err == nil || !strings.Contains(err.Error(), "has variants") {
		t.Fatalf("Run of a suite with variants: %v", err)
	}
	same("run", f.Suite, inputOf(l))
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stopped by the test"))
	vs := inputsOf(l.Variants())
	files, errs := RunVariants(ctx, vs, "sequential", "test", func(int) Options { return Options{} })
	for i, f := range files {
		if errs[i] == nil || !f.Incomplete {
			t.Fatalf("variant %d of a stopped run: %v, incomplete %v", i, errs[i], f.Incomplete)
		}
		same("variant not run", f.Suite, vs[i])
	}
}
