package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/suitefile"
)

// lateReads answers in two chunks 50 ms apart, flushed one by one, except
// that the benchmark requests numbered in late (from 1) get both chunks in
// one write: the client reads them together, as a client that fell
// behind would, and their first token's stamp is not its own.
func lateReads(t *testing.T, late func(n int64) bool) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		const chunk = `data: {"choices":[{"delta":{"content":" ok"}}]}` + "\n\n"
		fl := w.(http.Flusher)
		if !strings.Contains(string(body), "Say hello.") && late(n.Add(1)) {
			io.WriteString(w, chunk+chunk)
			fl.Flush()
		} else {
			io.WriteString(w, chunk)
			fl.Flush()
			time.Sleep(50 * time.Millisecond) // a client 50 ms behind would read them together
			io.WriteString(w, chunk)
			fl.Flush()
		}
		time.Sleep(5 * time.Millisecond)
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runLateReads(t *testing.T, url string, reruns int) *suitefile.File {
	t.Helper()
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'reruns',
  target: b.target.url('%s', model='m'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(2), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.rates([40], duration='500ms', warmup='0s'),
  slos: [b.slo.p99('ttft', '<', '5s')],
}`, url)
	l, err := suitefile.LoadSource("reruns.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A trial whose first tokens were read late (a quarter of them) did not
// measure the server: it is measured again, the discarded attempt's
// evidence recorded with the trial kept.
func TestInvalidTrialIsRerun(t *testing.T) {
	t.Parallel()
	// The first attempt's ~20 requests: 1 to 5 late. The rerun's: none.
	srv := lateReads(t, func(n int64) bool { return n <= 5 })
	f, err := Run(context.Background(), runLateReads(t, srv.URL, 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) != 1 {
		t.Fatalf("%d points", len(f.Points))
	}
	p := f.Points[0]
	v := p.Validity
	var late int
	if v != nil && len(v.Reruns) > 0 {
		fmt.Sscanf(v.Reruns[0], "%d of ", &late)
	}
	if v == nil || len(v.Invalid) != 0 || len(v.Reruns) == 0 || late < 5 || !strings.Contains(v.Reruns[0], "first tokens were read late") {
		t.Fatalf("validity %+v", v)
	}
	if p.Requests.Sent < 10 || p.Tokens.CoalescedFirst != 0 || len(f.SLOs) == 0 || !f.SLOs[0].Pass {
		t.Errorf("the kept trial: sent %d, coalesced %d, SLOs %+v", p.Requests.Sent, p.Tokens.CoalescedFirst, f.SLOs)
	}
}

// A machine that stays busy through every rerun leaves the point
// inconclusive: its SLOs neither pass nor fail, and a gate says so.
func TestStillInvalidIsInconclusive(t *testing.T) {
	t.Parallel()
	srv := lateReads(t, func(n int64) bool { return n%4 == 0 })
	f, err := Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Reruns: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Points[0]
	if p.Valid() || len(p.Validity.Reruns) != 1 || !strings.Contains(p.Validity.Invalid[0], "first tokens were read late") {
		t.Fatalf("validity %+v", p.Validity)
	}
	if s := f.SLOs[0]; s.Pass || !s.Inconclusive {
		t.Errorf("SLO %+v", s)
	}
	r := compare.WithoutBaseline(f)
	if r.Failed() || !r.Inconclusive() || r.Count(compare.Inconclusive) != 1 {
		t.Errorf("gate: failed %v, inconclusive %v, rows %+v", r.Failed(), r.Inconclusive(), r.Rows)
	}
	// Without reruns it is judged at once.
	f, err = Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Reruns: -1})
	if err != nil {
		t.Fatal(err)
	}
	if v := f.Points[0].Validity; v == nil || len(v.Reruns) != 0 || len(v.Invalid) == 0 {
		t.Errorf("no reruns: %+v", v)
	}
}
