package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/offered"
	"github.com/benchci/benchci/internal/sim"
)

// A run is split only where the shards can share it: one server they all
// reach, and points fixed in advance.
func TestShardable(t *testing.T) {
	sh := loadgen.Shard{Index: 0, Count: 4}
	for _, c := range []struct {
		name string
		s    suite.Suite
		want string
	}{
		{"sim", suite.Suite{Target: suite.Target{Kind: "sim"}, Sweep: suite.Sweep{Kind: suite.SweepRate}}, "runs inside each shard"},
		{"capacity", suite.Suite{Target: suite.Target{Kind: "url"}, Sweep: suite.Sweep{Kind: suite.SweepCapacity}}, "chooses each point"},
		{"too few workers", suite.Suite{Target: suite.Target{Kind: "url"}, Sweep: suite.Sweep{Kind: suite.SweepConcurrency, Concurrencies: []int{8, 2}}}, "concurrency 2 cannot be split over 4"},
		{"rates", suite.Suite{Target: suite.Target{Kind: "url"}, Sweep: suite.Sweep{Kind: suite.SweepRate}}, ""},
	} {
		err := shardable(&c.s, sh)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := shardable(&suite.Suite{Target: suite.Target{Kind: "sim"}}, loadgen.Shard{}); err != nil {
		t.Errorf("an unsharded run: %v", err)
	}
}

// Each of two shards offers about half the rate: its offered-rate note
// judges it against that share, not the whole rate. Seed 2 draws 81
// arrivals where 80 are due, 41 and 40 per shard: against the whole
// rate each shard was 4.4 standard deviations "below the nominal".
func TestShardOfferedRateNote(t *testing.T) {
	t.Parallel()
	srv := tokenizerServer(t, 0, 1, true)
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'sharded',
  target: b.target.url('%s', model='m'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(1), prompts: b.prompts.synthetic(calibrate=false), seed: 2 },
  sweep: b.sweep.rates([40], duration='2s', warmup='0s'),
}`, srv.URL)
	l, err := suitefile.LoadSource("sharded.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		f, err := Run(context.Background(), inputOf(l), Options{Shard: loadgen.Shard{Index: i, Count: 2}, Reruns: -1})
		if err != nil {
			t.Fatal(err)
		}
		p := f.Points[0]
		if p.Schedule.ScheduledRate > 30 {
			t.Fatalf("shard %d offered %.1f req/s of 40: want about its half", i, p.Schedule.ScheduledRate)
		}
		// The note as the shard's own point would get it, which a busy
		// machine's reruns or flags cannot change.
		if n := offered.Note(l.Suite, &p, 2); n != "" {
			t.Errorf("shard %d offered %.1f req/s: %s", i, p.Schedule.ScheduledRate, n)
		}
		for _, n := range f.Notes {
			if strings.Contains(n, "standard deviations") {
				t.Errorf("shard %d: %s", i, n)
			}
		}
	}
}

// The server's TTFT mean covers every shard's requests: a shard sets none
// of it against its own, where it had read as a client faster than the
// server ("which no request can be"). A run of the whole still does.
func TestShardReadsNoServerOverhead(t *testing.T) {
	t.Parallel()
	p, _ := sim.Lookup("llama3-8b-h100")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := sim.New(p).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'sharded',
  target: b.target.url('%s'),
  workload: { input_tokens: b.dist.fixed(32), output_tokens: b.dist.fixed(4), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.rates([20], duration='1s', warmup='0s'),
}`, u)
	l, err := suitefile.LoadSource("sharded.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range []loadgen.Shard{{Index: 0, Count: 2}, {}} {
		f, err := Run(context.Background(), inputOf(l), Options{Shard: sh, Reruns: -1})
		if err != nil {
			t.Fatal(err)
		}
		pt := f.Points[0]
		if _, ok := pt.Server["server_ttft_mean_s"]; !ok {
			t.Fatalf("the simulator reported no TTFT mean: %v", pt.Server)
		}
		read := pt.Overhead != nil
		for _, n := range f.Notes {
			read = read || strings.Contains(n, "which no request can be")
		}
		if sharded := sh.Count > 1; sharded == read {
			t.Errorf("shard %+v: overhead %+v, notes %q", sh, pt.Overhead, f.Notes)
		}
	}
}
