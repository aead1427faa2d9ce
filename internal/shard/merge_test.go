package shard

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
)

// recording is 2000 TTFTs in microseconds, drawn once.
func recording() []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]int64, 2000)
	for i := range v {
		v[i] = int64(20_000 + r.ExpFloat64()*80_000)
	}
	return v
}

func hist(t *testing.T, vs []int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for _, v := range vs {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// shardFile is shard i of n, one point holding the values given, as if
// measured over a 10 s window: its TTFT histogram and summary, a request
// answered per value, and a quarter as many failed, 50 output tokens per
// answer.
func shardFile(t *testing.T, i, n int, vs []int64) *result.File {
	t.Helper()
	l, err := suitefile.LoadSource("s.jsonnet", `local b = import 'benchci.libsonnet';
b.suite {
  name: 's',
  target: b.target.url('http://127.0.0.1:1', model='m'),
  workload: { input_tokens: b.dist.fixed(20), output_tokens: b.dist.fixed(50) },
  sweep: b.sweep.rates([8], duration='10s'),
  slos: [b.slo.p99('ttft', '<', '200ms', at_rate=8)],
  cost: b.cost.gpu(usd_per_hour=2, gpus=2),
  telemetry: [b.telemetry.dcgm('http://127.0.0.1:9400/metrics')],
}`, suitefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := hist(t, vs)
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	failed := len(vs) / 4
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	p := result.Point{Label: "rate=8", Mode: "rate", Rate: 8, Trial: 1, Measured: result.Measured{
		Requests:   result.Requests{Sent: len(vs) + failed, Completed: len(vs), Failed: failed, ErrorRate: float64(failed) / float64(len(vs)+failed), Errors: map[string]int{"http": failed}},
		Window:     result.Window{Start: start.Add(time.Duration(i) * time.Millisecond), Seconds: 10},
		Throughput: result.Throughput{Requests: float64(len(vs)) / 10, OutputTokens: 50 * float64(len(vs)) / 10, TotalTokens: 70 * float64(len(vs)) / 10},
		Latency:    map[string]result.Summary{metric.TTFT: result.Summarize(h, 1000)},
		Histograms: map[string]string{metric.TTFT: enc},
	}, Schedule: result.Schedule{TargetRate: 8, ScheduledRate: 8.0 / float64(n), SendRate: 8.0 / float64(n), StartSkewMs: float64(i)},
		// Each shard scraped the one exporter; their readings differ a little.
		Telemetry: map[string]float64{"dcgm.power_mean_w": 900 + float64(i), "dcgm.gpus": 2}}
	return &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", Hash: l.Hash, WorkloadHash: l.WorkloadHash, Definition: l.JSON},
		Shard:  &result.Shard{Index: i, Count: n, Started: start, Finished: start.Add(12 * time.Second)},
		Points: []result.Point{p}, Started: start, Finished: start.Add(12 * time.Second)}
}

// Merging the two halves of one recording gives the histogram of the
// whole, bucket for bucket, and its percentiles; counts add, throughputs
// add over the common window, and the error rate and cost are computed
// again from the sums.
func TestMergeHalvesIsTheWhole(t *testing.T) {
	vs := recording()
	a, b := shardFile(t, 0, 2, vs[:1000]), shardFile(t, 1, 2, vs[1000:])
	m, err := Merge([]*result.File{b, a}, DefaultMaxSkew)
	if err != nil {
		t.Fatal(err)
	}
	if m.Incomplete || m.Shard != nil || len(m.MergedFrom) != 2 || m.MergedFrom[0].Index != 0 {
		t.Errorf("merged: incomplete %v (%s), from %+v", m.Incomplete, m.Error, m.MergedFrom)
	}
	p := m.Points[0]
	got, err := result.DecodeHistogram(p.Histograms[metric.TTFT])
	if err != nil {
		t.Fatal(err)
	}
	whole := hist(t, vs)
	if !got.Equals(whole) {
		t.Error("the merged histogram is not the whole recording's")
	}
	if p.Latency[metric.TTFT] != result.Summarize(whole, 1000) {
		t.Errorf("TTFT %+v, want %+v", p.Latency[metric.TTFT], result.Summarize(whole, 1000))
	}
	r := p.Requests
	if r.Sent != 2500 || r.Failed != 500 || r.ErrorRate != 0.2 || r.Errors["http"] != 500 {
		t.Errorf("requests %+v", r)
	}
	if p.Throughput.Requests != 200 || p.Throughput.OutputTokens != 10000 || p.Window.Seconds != 10 || p.Schedule.SendRate != 8 {
		t.Errorf("throughput %+v over %v s, send rate %v", p.Throughput, p.Window.Seconds, p.Schedule.SendRate)
	}
	// 2 GPUs at $2/h over 10000 tok/s: 4e6 / (10000 x 3600) per 1M.
	if c := p.Cost; c == nil || c.PerMOutput < 0.1111 || c.PerMOutput > 0.1112 {
		t.Errorf("cost %+v, want $0.1111 per 1M from the merged throughput", c)
	}
	// The first shard's telemetry stands for the point: 900 W over the
	// merged 10000 tok/s.
	if p.Telemetry["dcgm.power_mean_w"] != 900 || p.EnergyPerOutputToken != 0.09 {
		t.Errorf("telemetry %v, %v J/token; want shard 0's 900 W and 0.09 J/token", p.Telemetry, p.EnergyPerOutputToken)
	}
	if p.Schedule.StartSkewMs != 1 || !m.Started.Equal(a.Started) {
		t.Errorf("skew %v, started %v", p.Schedule.StartSkewMs, m.Started)
	}
	// Merge judges the suite's SLO on the merged point, the whole
	// recording's P99 (about 390 ms, over the 200 ms asserted), so a
	// library user gets the verdicts the command prints.
	var judged []result.SLO
	for _, v := range m.SLOs {
		if v.Point == "rate=8" && strings.HasPrefix(v.Name, "ttft p99") {
			judged = append(judged, v)
		}
	}
	if len(judged) != 1 || judged[0].Pass || judged[0].Measured != p.Latency[metric.TTFT].P99 {
		t.Errorf("SLO verdicts %+v, want one failing ttft p99 at the merged P99 %v", m.SLOs, p.Latency[metric.TTFT].P99)
	}
}

// A shard that did not measure the server leaves the merged point
// invalid, naming the shard: the load the server saw was not the plan's.
func TestMergeKeepsInvalidShards(t *testing.T) {
	vs := recording()
	a, b := shardFile(t, 0, 2, vs[:1000]), shardFile(t, 1, 2, vs[1000:])
	a.Points[0].Validity = &result.Validity{}
	b.Points[0].Validity = &result.Validity{Invalid: []string{"the machine stalled 1.20 s in 3 pauses"}, StallMs: 1200, MaxStallMs: 600}
	m, err := Merge([]*result.File{a, b}, DefaultMaxSkew)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Points[0].Validity
	if m.Points[0].Valid() || len(v.Invalid) != 1 || v.Invalid[0] != "shard 1: the machine stalled 1.20 s in 3 pauses" || v.MaxStallMs != 600 {
		t.Errorf("merged validity %+v", v)
	}
}

// Shards that share a fixed salt keep it; shards that each drew one sent
// different text, so the merge records none and says so.
func TestMergePromptSalts(t *testing.T) {
	vs := recording()
	for _, tc := range []struct {
		a, b, want string
		note       bool
	}{
		{"", "", "", false},
		{"fixed", "fixed", "fixed", false},
		{"1a2b", "3c4d", "", true},
	} {
		a, b := shardFile(t, 0, 2, vs[:1000]), shardFile(t, 1, 2, vs[1000:])
		a.PromptSalt, b.PromptSalt = tc.a, tc.b
		m, err := Merge([]*result.File{a, b}, DefaultMaxSkew)
		if err != nil {
			t.Fatal(err)
		}
		noted := slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, "drew their own prompt salts") })
		if m.PromptSalt != tc.want || noted != tc.note {
			t.Errorf("salts %q, %q: merged %q, noted %v (notes %q)", tc.a, tc.b, m.PromptSalt, noted, m.Notes)
		}
	}
}

func TestMergeRefusesAndFlags(t *testing.T) {
	vs := recording()
	s0, s1 := shardFile(t, 0, 2, vs[:1000]), shardFile(t, 1, 2, vs[1000:])
	other := shardFile(t, 1, 2, vs[1000:])
	other.Suite.WorkloadHash = "different"
	three := shardFile(t, 1, 3, vs[1000:])
	plain := shardFile(t, 0, 2, vs)
	plain.Shard = nil
	edited := shardFile(t, 1, 2, vs[1000:])
	edited.Suite.Hash = "edited"
	for _, c := range []struct {
		name  string
		files []*result.File
		want  string
	}{
		{"another workload", []*result.File{s0, other}, "another workload"},
		{"another shard count", []*result.File{s0, three}, "one of 3"},
		{"twice", []*result.File{s0, s0}, "given twice"},
		{"not a shard", []*result.File{s0, plain}, "not a shard's results"},
		{"another suite version", []*result.File{s0, edited}, "another version of the suite"},
		{"none", nil, "no shard results"},
	} {
		if _, err := Merge(c.files, DefaultMaxSkew); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}

	// A missing shard: merged, incomplete, named.
	m, err := Merge([]*result.File{s1}, DefaultMaxSkew)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Incomplete || !strings.Contains(m.Error, "shard 0 of 2 missing") || !m.Points[0].Incomplete {
		t.Errorf("one of two shards: incomplete %v, error %q", m.Incomplete, m.Error)
	}

	// A late start is noted.
	late := shardFile(t, 1, 2, vs[1000:])
	late.Points[0].Schedule.StartSkewMs = 450
	m, err = Merge([]*result.File{s0, late}, DefaultMaxSkew)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "shard 1 started a point 450 ms after its aligned time") {
		t.Errorf("notes %q", m.Notes)
	}
}

// The merged point's offered rate is judged against the whole rate, once;
// the shards' own notes on it are not copied (one written before shards
// were judged against their share called each half "below the nominal").
func TestMergeJudgesOfferedRate(t *testing.T) {
	vs := recording()
	for _, tc := range []struct {
		name    string
		offered float64 // by each of the two shards, req/s
		want    string  // the merged file's one note ("": none)
	}{
		{"each its half", 4, ""},
		// 60 arrivals of the 80 due over 10 s: 2.2 sd of Poisson(80).
		{"the whole below", 3, "rate=8: the arrivals drawn offered 6 req/s, 2.2 standard deviations below the nominal 8 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var files []*result.File
			for i := range 2 {
				f := shardFile(t, i, 2, vs[i*1000:(i+1)*1000])
				f.Points[0].Schedule.ScheduledRate = tc.offered
				f.Notes = []string{"rate=8: the arrivals drawn offered 4 req/s, 4.5 standard deviations below the nominal 8 (its noise over 10 s is ±0.89 req/s)"}
				files = append(files, f)
			}
			m, err := Merge(files, DefaultMaxSkew)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && len(m.Notes) > 0 || tc.want != "" && (len(m.Notes) != 1 || !strings.HasPrefix(m.Notes[0], tc.want)) {
				t.Errorf("notes %q, want %q", m.Notes, tc.want)
			}
		})
	}
}

// Shards run one after the other never loaded the server together: their
// sum is refused, naming the shards; windows apart by a little skew merge.
func TestMergeRefusesShardsRunApart(t *testing.T) {
	vs := recording()
	for _, tc := range []struct {
		shift time.Duration
		want  string
	}{
		{2 * time.Second, ""},
		{7 * time.Second, "shard 1's and shard 0's windows overlapped 3 s, less than half the shortest window (10 s)"},
		{30 * time.Second, "shard 1's window began 20 s after shard 0's had ended"},
		{-1, "1 of 2 shards record no start for the point's window"}, // one start cleared
	} {
		a, b := shardFile(t, 0, 2, vs[:1000]), shardFile(t, 1, 2, vs[1000:])
		b.Points[0].Window.Start = a.Points[0].Window.Start.Add(tc.shift)
		if tc.shift < 0 {
			b.Points[0].Window.Start = time.Time{}
		}
		_, err := Merge([]*result.File{a, b}, DefaultMaxSkew)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("shift %v: %v", tc.shift, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("shift %v: error %v, want %q", tc.shift, err, tc.want)
		}
	}
}
