package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/offered"
	"github.com/benchci/benchci/internal/requestlog"
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
//
// A gateway holds each completion 20 ms before the simulator sees it, so a
// whole run's client mean is that far above the server's: with the bare
// simulator the two were within their own noise, and a loaded machine
// could push the client's just below (read as nothing, rightly).
func TestShardReadsNoServerOverhead(t *testing.T) {
	t.Parallel()
	p, _ := sim.Lookup("llama3-8b-h100")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := sim.New(p)
	s.Start(ctx)
	const gateway = 20 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			time.Sleep(gateway)
		}
		s.ServeHTTP(w, r)
	}))
	defer srv.Close()
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'sharded',
  target: b.target.url('%s'),
  workload: { input_tokens: b.dist.fixed(32), output_tokens: b.dist.fixed(4), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.rates([20], duration='1s', warmup='0s'),
}`, srv.URL)
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
		for _, n := range f.Notes {
			if strings.Contains(n, "which no request can be") {
				t.Errorf("shard %+v: %s", sh, n)
			}
		}
		if sh.Count > 1 {
			if pt.Overhead != nil {
				t.Errorf("shard %+v read an overhead of %.2f ms from a server mean over every shard", sh, pt.Overhead.TTFTMeanMs)
			}
			continue
		}
		// Every request's client TTFT holds the gateway's 20 ms; the two
		// means count slightly different requests (the window's edges),
		// hence the slack.
		if pt.Overhead == nil || pt.Overhead.TTFTMeanMs < 0.8*float64(gateway.Milliseconds()) {
			t.Errorf("whole run: overhead %+v behind a %v gateway (client TTFT mean %.2f ms, server's %.2f ms)",
				pt.Overhead, gateway, pt.Latency[metric.TTFT].Mean, 1000*pt.Server["server_ttft_mean_s"])
		}
	}
}

// Each trial of a point draws its own arrivals: the same draw in every
// trial would repeat one draw's shortfall (a "2 req/s" point that offered
// 1.47 in all four trials), where trials should average it out.
func TestTrialsDrawTheirOwnArrivals(t *testing.T) {
	t.Parallel()
	srv := tokenizerServer(t, 0, 1, true)
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'trials',
  target: b.target.url('%s', model='m'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(1), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.rates([20], duration='1s', warmup='0s'),
  trials: 2,
}`, srv.URL)
	l, err := suitefile.LoadSource("trials.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rl := requestlog.New(&buf, false)
	if _, err := Run(context.Background(), inputOf(l), Options{Requests: rl, Reruns: -1}); err != nil {
		t.Fatal(err)
	}
	if err := rl.Close(); err != nil {
		t.Fatal(err)
	}
	// The scheduled times (send minus lag), from each trial's first.
	due := map[int][]time.Duration{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r requestlog.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		due[r.Trial] = append(due[r.Trial], time.Duration(r.Sent.Add(-time.Duration(r.LagMs*float64(time.Millisecond))).UnixNano()))
	}
	offsets := func(ds []time.Duration) []time.Duration {
		slices.Sort(ds)
		var out []time.Duration
		for _, d := range ds[1:] {
			out = append(out, (d - ds[0]).Round(time.Millisecond))
		}
		return out
	}
	a, b := offsets(due[1]), offsets(due[2])
	if len(a) < 5 || len(b) < 5 {
		t.Fatalf("trials sent %d and %d requests", len(a)+1, len(b)+1)
	}
	if slices.Equal(a[:5], b[:5]) {
		t.Errorf("both trials were scheduled alike: %v", a[:5])
	}
}
