package runner

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/words"
)

// recordingServer answers like a server whose tokenizer counts
// overhead + perWord x words, and records a hash of every benchmark
// request's body without its model field, which variants may name
// differently, and without the "variant_only" extra field.
type recordingServer struct {
	*httptest.Server
	mu     sync.Mutex
	hashes []string
}

func newRecordingServer(t *testing.T, overhead, perWord float64) *recordingServer {
	rs := &recordingServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/completions") {
			http.NotFound(w, r) // engine probes, /metrics, a rerun's prefix-cache reset
			return
		}
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(data, &body)
		n := 0
		msgs, _ := body["messages"].([]any)
		for _, m := range msgs {
			c, _ := m.(map[string]any)["content"].(string)
			n += words.Count(c)
		}
		if body["max_tokens"] == 1.0 || body["max_tokens"] == 2.0 {
			// preflight and calibration probes are not the workload
		} else {
			delete(body, "model")
			delete(body, "variant_only")
			canon, _ := json.Marshal(body)
			sum := sha256.Sum256(canon)
			rs.mu.Lock()
			rs.hashes = append(rs.hashes, fmt.Sprintf("%x", sum[:8]))
			rs.mu.Unlock()
		}
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"x"}}]}`+"\n\n")
		fmt.Fprintf(w, `data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":1}}`+"\n\n", int(overhead+perWord*float64(n)+0.5))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *recordingServer) sent() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.hashes)
}

// distinct is hs sorted, without repeats.
func distinct(hs []string) []string {
	slices.Sort(hs)
	return slices.Compact(hs)
}

// startOrder records the order points start in, across runs.
type startOrder struct {
	mu     *sync.Mutex
	name   string
	starts *[]string
}

// A trial measured again on a stalled machine is marked "(rerun)": it is
// not a new point, but it takes a turn.
func (o startOrder) PointStarted(pt PointInfo, _ *loadgen.Progress) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.name + " " + pt.Label
	if pt.Rerun > 0 {
		s += " (rerun)"
	}
	*o.starts = append(*o.starts, s)
}

// checkTurns checks that runs took turns: each run started its points in
// want's order, and no run started twice in a row while another had a
// start still to come. Reruns take turns too, so a loaded machine that
// stalls a trial changes where points fall, never the alternation.
func checkTurns(t *testing.T, starts []string, want map[string][]string) {
	t.Helper()
	got := map[string][]string{}
	for _, s := range starts {
		name, label, _ := strings.Cut(s, " ")
		if !strings.HasSuffix(label, " (rerun)") {
			got[name] = append(got[name], label)
		}
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s started %v, want %v (all starts %v)", name, got[name], w, starts)
		}
	}
	for i := 1; i < len(starts); i++ {
		prev, _, _ := strings.Cut(starts[i-1], " ")
		cur, _, _ := strings.Cut(starts[i], " ")
		if prev != cur {
			continue
		}
		for _, later := range starts[i+1:] {
			if other, _, _ := strings.Cut(later, " "); other != cur {
				t.Errorf("%s started twice in a row while %s waited: %v", cur, other, starts)
				return
			}
		}
	}
}
func (startOrder) PointFinished(PointInfo, *result.Point) {}

// TestVariantsSendTheSameRequests runs two variants on servers whose
// tokenizers differ (so each would size prompts differently if it
// calibrated alone), in both orders, and checks that both were sent the
// identical request sequence, and that interleaving alternates points.
func TestVariantsSendTheSameRequests(t *testing.T) {
	for _, order := range []string{"sequential", "interleaved"} {
		t.Run(order, func(t *testing.T) {
			t.Parallel()
			a, b := newRecordingServer(t, 5, 1.0), newRecordingServer(t, 9, 1.4)
			src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'same',
  workload: { input_tokens: b.dist.uniform(20, 200), output_tokens: b.dist.uniform(3, 30), arrival: b.arrival.constant() },
  sweep: b.sweep.rates([40, 60], duration='500ms', warmup='0s'),
  variants: {
    a: { target: b.target.url('%s', model='model-a') },
    b: { target: b.target.url('%s'), request: { model: 'model-b', extra: { variant_only: true } } },
  },
  order: '%s',
}`, a.URL, b.URL, order)
			l, err := suitefile.LoadSource("same.jsonnet", src, suitefile.Options{Known: Known()})
			if err != nil {
				t.Fatal(err)
			}
			vs := l.Variants()
			var mu sync.Mutex
			var starts []string
			files, errs := RunVariants(context.Background(), inputsOf(vs), l.Suite.Order, "test", func(i int) Options {
				return Options{Observer: startOrder{&mu, vs[i].Name, &starts}}
			})
			for i, err := range errs {
				if err != nil {
					t.Fatalf("variant %s: %v", vs[i].Name, err)
				}
			}
			// The same requests, as sets: concurrent requests reach a server
			// in whatever order the machine's scheduler lets them, and a
			// trial rerun because the machine stalled sends its requests again.
			ha, hb := distinct(a.sent()), distinct(b.sent())
			if len(ha) < 40 || !slices.Equal(ha, hb) {
				t.Errorf("a was sent %d distinct requests, b %d; equal: %v", len(ha), len(hb), slices.Equal(ha, hb))
			}
			if files[0].Suite.Name != "same/a" || files[1].Suite.Variant != "b" || files[1].Suite.Order != order ||
				files[0].Suite.WorkloadHash != files[1].Suite.WorkloadHash || files[1].Target.Model != "model-b" {
				t.Errorf("results %+v / %+v, model %q", files[0].Suite, files[1].Suite, files[1].Target.Model)
			}
			if c := files[1].Calibration; c == nil || !strings.Contains(c.Note, "measured on same/a") {
				t.Errorf("b's calibration %+v", c)
			}
			if order == "interleaved" {
				checkTurns(t, starts, map[string][]string{"a": {"rate=40", "rate=60"}, "b": {"rate=40", "rate=60"}})
				return
			}
			var firsts []string
			for _, s := range starts {
				if !strings.HasSuffix(s, " (rerun)") {
					firsts = append(firsts, s)
				}
			}
			if want := []string{"a rate=40", "a rate=60", "b rate=40", "b rate=60"}; !slices.Equal(firsts, want) {
				t.Errorf("points started %v, want %v", starts, want)
			}
		})
	}
}

// TestRotation passes the turn round robin, and on without a run that
// left, whenever it left.
func TestRotation(t *testing.T) {
	r := NewRotation(3)
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	steps := []int{3, 1, 2} // points per run
	for i, n := range steps {
		m := r.Member(i)
		wg.Go(func() {
			defer m.Leave()
			if err := m.Take(context.Background()); err != nil {
				t.Error(err)
				return
			}
			for k := range n {
				if k > 0 {
					if err := m.Yield(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if want := []int{0, 1, 2, 0, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("turns %v, want %v", got, want)
	}
	// A stopped context ends a wait at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NewRotation(2).Member(1).Take(ctx); err == nil {
		t.Error("Take waited through a cancelled context")
	}
}
