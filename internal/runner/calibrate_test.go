package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/client"
)

// refusingCalibration answers the first `refuse` calibration requests
// 429 (Retry-After 0: the backoff decides the wait, so the test waits
// milliseconds) and every other request as tokenizerServer does, with
// overhead 11 and 1.25 tokens per word. It counts calibration requests.
func refusingCalibration(t *testing.T, refuse int64) (*httptest.Server, *atomic.Int64) {
	counting := tokenizerServer(t, 11, 1.25, true)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("X-Request-Id"), "benchci-calibrate") && calls.Add(1) <= refuse {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, "slow down")
			return
		}
		counting.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// A 429 on the calibration's first request is retried, under the suite's
// policy or, without one, a few waits of its own: one refusal no longer
// sizes every prompt of the run at one token per word.
func TestCalibrationRetries(t *testing.T) {
	t.Parallel()
	policy := func(s *suite.Suite) *suite.Suite {
		s.Request.Timeout = suite.Duration(5 * time.Second)
		return s
	}
	noPolicy := policy(&suite.Suite{})
	withPolicy := policy(&suite.Suite{})
	withPolicy.Request.Retry = &suite.Retry{On: []string{"429"}, MaxAttempts: 2, Backoff: suite.Backoff{Initial: suite.Duration(time.Millisecond), Max: suite.Duration(time.Millisecond), Multiplier: 2}}
	for _, tc := range []struct {
		name   string
		s      *suite.Suite
		refuse int64
		// calls is the calibration requests sent; fail, what its error says
		// ("": it succeeds).
		calls int64
		fail  []string
	}{
		// Refused once: 1 + the three probes + the shortest prompt's.
		{"no policy: refused once", noPolicy, 1, 5, nil},
		{"no policy: refused throughout", noPolicy, 99, 4, []string{"HTTP 429: slow down", "after 4 attempt(s)"}},
		{"the suite's policy", withPolicy, 1, 5, nil},
		// The suite's two attempts, not the default's four.
		{"the suite's policy runs out", withPolicy, 2, 2, []string{"HTTP 429: slow down", "after 2 attempt(s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := refusingCalibration(t, tc.refuse)
			cl, err := client.New(client.Options{BaseURL: srv.URL, API: "chat", Model: "m", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			c, err := calibrate(context.Background(), cl, calibrationRetry(tc.s))
			if got := calls.Load(); got != tc.calls {
				t.Errorf("%d calibration requests, want %d", got, tc.calls)
			}
			if tc.fail == nil {
				if err != nil || c.Overhead < 10.5 || c.Overhead > 11.5 {
					t.Errorf("calibration %+v, %v: want overhead 11", c, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("calibration %+v succeeded against a server refusing it", c)
			}
			for _, w := range tc.fail {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to say %q", err, w)
				}
			}
		})
	}
}

// A calibration that still fails is said with the figures, naming the
// cause and what the fallback means, not only in the results file.
func TestCalibrationFailureIsNoted(t *testing.T) {
	t.Parallel()
	srv, _ := refusingCalibration(t, 99)
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'calfail',
  target: b.target.url('%s', model='m'),
  request: { timeout: '2s' },
  workload: { input_tokens: b.dist.fixed(50), output_tokens: b.dist.fixed(1) },
  sweep: b.sweep.concurrency([1], duration='300ms', warmup='0s'),
}`, srv.URL)
	l, err := suitefile.LoadSource("calfail.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Run(context.Background(), inputOf(l), Options{Reruns: -1})
	if err != nil {
		t.Fatal(err)
	}
	var warned, linked bool
	for _, n := range f.Notes {
		warned = warned || strings.HasPrefix(n, "prompt calibration failed") && strings.Contains(n, "HTTP 429") && strings.Contains(n, "prompts are sized")
		linked = linked || strings.Contains(n, "prompts (100%) were more than 5% off") && strings.Contains(n, "the prompt calibration failed")
	}
	if !warned || !linked {
		t.Errorf("notes %q: want the calibration's failure, its cause and fallback, and the prompt-length note pointing at it", f.Notes)
	}
}
