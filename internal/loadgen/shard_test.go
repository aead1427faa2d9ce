package loadgen

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/clock"
)

// idRecorder is a server that notes each request's id, body and send time.
type idRecorder struct {
	mu   sync.Mutex
	t0   time.Time
	seen map[string]string // id -> body @ offset from t0
}

func (r *idRecorder) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	res.Reset()
	res.Sent = time.Now()
	r.mu.Lock()
	r.seen[id] = fmt.Sprintf("%s @ %v", body, res.Sent.Sub(r.t0))
	r.mu.Unlock()
	time.Sleep(10 * time.Millisecond)
	res.FirstToken, res.FirstAnswer = 5*time.Millisecond, 5*time.Millisecond
	res.ChunkAt, res.ChunkTokens = append(res.ChunkAt, 10*time.Millisecond), append(res.ChunkTokens, 1)
	res.OutputTokens, res.TokenSource = 1, client.TokensFromUsage
	res.End = time.Since(res.Sent)
}

// numbered yields bodies that name their place in the sequence.
func numbered() Source {
	n := 0
	return func() (Item, error) {
		n++
		return Item{Body: []byte("req" + strconv.Itoa(n)), WantOutput: 1}, nil
	}
}

// Four shards of a Poisson point, started at one instant, send between
// them exactly what one machine sends: the same ids with the same bodies
// at the same offsets; and closed-loop shards split the workers.
func TestShardsUnionIsTheTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{Mode: OpenLoop, Rate: 80, Arrivals: arrivals(t, "poisson", 80), Warmup: 500 * time.Millisecond, Duration: 3 * time.Second, Clock: clock.Timers}
		start := time.Now().Add(time.Second)
		run := func(sh Shard) (map[string]string, *Outcome) {
			r := &idRecorder{seen: map[string]string{}, t0: start}
			c := cfg
			c.Shard, c.StartAt = sh, start
			out, err := Run(context.Background(), r, c, numbered())
			if err != nil {
				t.Error(err)
				return nil, &Outcome{}
			}
			return r.seen, out
		}
		whole, single := run(Shard{})
		start = time.Now().Add(time.Second)
		parts := make([]map[string]string, 4)
		outs := make([]*Outcome, 4)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() { parts[i], outs[i] = run(Shard{Index: i, Count: 4}) })
		}
		wg.Wait()
		union := map[string]string{}
		sent := 0
		for i, part := range parts {
			out := outs[i]
			for id, v := range part {
				if _, dup := union[id]; dup {
					t.Errorf("%s sent by two shards", id)
				}
				union[id] = v
			}
			sent += out.Requests.Sent
			if out.Schedule.StartSkewMs != 0 {
				t.Errorf("shard %d started %v ms late", i, out.Schedule.StartSkewMs)
			}
		}
		if !maps.Equal(whole, union) {
			ids := slices.Sorted(maps.Keys(whole))
			t.Errorf("the shards sent %d requests, one machine %d; first ids %v", len(union), len(whole), ids[:min(3, len(ids))])
		}
		if sent != single.Requests.Sent || len(whole) < 200 {
			t.Errorf("measured %d over the shards, %d on one machine (of %d)", sent, single.Requests.Sent, len(whole))
		}
		if !strings.HasPrefix(whole["benchci-1"], "req1 @ ") || !strings.HasPrefix(whole["benchci-100"], "req100 @ ") {
			t.Errorf("benchci-1 is %q, benchci-100 %q: ids name the place in the sequence", whole["benchci-1"], whole["benchci-100"])
		}
	})
	var sum int
	for i := range 3 {
		sum += Shard{Index: i, Count: 3}.Split(16)
	}
	if sum != 16 || (Shard{Index: 0, Count: 3}).Split(16) != 6 || (Shard{Index: 2, Count: 3}).Split(16) != 5 {
		t.Errorf("16 workers over 3 shards: %d in all", sum)
	}
}

// A shard that cannot start on time starts at once and says how late.
func TestShardStartSkew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &idRecorder{seen: map[string]string{}, t0: time.Now()}
		out, err := Run(context.Background(), r, Config{Mode: ClosedLoop, Concurrency: 2, Duration: time.Second, Clock: clock.Timers,
			StartAt: time.Now().Add(-1500 * time.Millisecond), Shard: Shard{Index: 1, Count: 2}}, numbered())
		if err != nil {
			t.Fatal(err)
		}
		if out.Schedule.StartSkewMs != 1500 {
			t.Errorf("skew %v ms, want 1500", out.Schedule.StartSkewMs)
		}
		for id := range r.seen {
			if n, _ := strconv.Atoi(id[len("benchci-"):]); n%2 != 0 {
				t.Errorf("shard 1 of 2 sent %s: closed loop takes every other request", id)
			}
		}
	})
}
