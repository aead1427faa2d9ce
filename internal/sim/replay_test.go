package sim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The replay admits a request as the HTTP server does: the same prompt
// tokens (chat template and all), the same output length, the same
// refusal; the answer's usage over HTTP is what Submit reports.
func TestReplayAdmitsAsTheServer(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("llama3-8b-h100")
	_, url := startServer(t, p)
	long := strings.Repeat("word ", p.MaxModelLen)
	cases := []struct {
		name, path, body string
	}{
		{"chat", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":5,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"one two three four"}]}`},
		{"completions", "/v1/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":3,"prompt":"one two three"}`},
		{"too long", "/v1/chat/completions", `{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"` + long + `"}]}`},
		{"no max_tokens left", "/v1/chat/completions", `{"model":"m","stream":true,"max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`},
	}
	usage := regexp.MustCompile(`"prompt_tokens":(\d+),"completion_tokens":(\d+)`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, text := post(t, url+c.path, c.body)
			r, err := NewReplay(p)
			if err != nil {
				t.Fatal(err)
			}
			a, err := r.Submit([]byte(c.body), time.Unix(0, 0))
			if code != 200 {
				var e struct{ Error struct{ Message string } }
				json.Unmarshal([]byte(text), &e)
				if err == nil || err.Error() != e.Error.Message {
					t.Errorf("server refused with %q; replay: %v", e.Error.Message, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := usage.FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("no usage in %s", text)
			}
			prompt, _ := strconv.Atoi(m[1])
			output, _ := strconv.Atoi(m[2])
			if a.Prompt != prompt || a.Output != output {
				t.Errorf("replay admitted %d prompt, %d output tokens; the server answered %d, %d", a.Prompt, a.Output, prompt, output)
			}
		})
	}
}

// The replay steps the server's engine: a prompt seen before is served
// from the prefix cache (its first token comes sooner), until the cache
// is reset; a step's tokens come at its cost, and a canceled request
// produces no more.
func TestReplaySteps(t *testing.T) {
	t.Parallel()
	p, _ := Lookup("llama3-8b-h100") // caches prefixes
	r, err := NewReplay(p)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"model":"m","max_tokens":4,"messages":[{"role":"user","content":"` + strings.Repeat("alpha beta ", 400) + `"}]}`)
	now := time.Unix(0, 0)
	ttft := func() time.Duration {
		start := now
		a, err := r.Submit(body, now)
		if err != nil {
			t.Fatal(err)
		}
		var first time.Duration
		for done := false; !done; {
			cost, ok := r.Start(now)
			if !ok {
				t.Fatal("the engine could not step")
			}
			now = now.Add(cost)
			r.End(func(id, produced int, finished bool) {
				if id == a.ID && first == 0 {
					first = now.Sub(start)
				}
				done = done || finished
			})
		}
		if r.Busy() {
			t.Fatal("busy after the only request finished")
		}
		return first
	}
	cold := ttft()
	warm := ttft()
	r.ResetPrefixCache()
	reset := ttft()
	if warm >= cold || reset != cold {
		t.Errorf("TTFT cold %v, cached %v, after a reset %v: want the cached one shorter, the reset one as cold", cold, warm, reset)
	}

	a, _ := r.Submit(body, now)
	r.Cancel(a.ID)
	if _, ok := r.Start(now); ok {
		t.Error("a step ran for a canceled request")
	}
}

// The replay refuses what one engine stepped as requests are sent cannot
// model, rather than replaying it as something else.
func TestReplayRefuses(t *testing.T) {
	t.Parallel()
	p := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	d, err := WithDisaggregation(p, Disaggregation{LinkGBs: 50})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewReplay(d); err == nil || !strings.Contains(err.Error(), "disaggregated") {
		t.Errorf("disaggregated: err %v", err)
	}
}

// pathReplay is a replay of llama-3-8b on an H100 with a request path of
// overhead (0: none).
func pathReplay(t *testing.T, overhead time.Duration) *Replay {
	t.Helper()
	p := derive(t, "llama-3-8b", "h100-sxm", Spec{}, Knobs{})
	p.RequestOverhead = overhead
	r, err := NewReplay(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var pathBody = []byte(`{"model":"m","max_tokens":4,"messages":[{"role":"user","content":"` + strings.Repeat("alpha beta ", 100) + `"}]}`)

const pathOverhead = 20 * time.Millisecond

// A request reaches the replayed engine its request path's delay after it
// was sent: on an idle engine the first step is a wait of half to one and
// a half of the overhead, and the first token comes exactly that much
// later than without one.
func TestReplayRequestPath(t *testing.T) {
	t.Parallel()
	ttft := func(overhead time.Duration) (first, wait time.Duration) {
		r := pathReplay(t, overhead)
		now := time.Unix(0, 0)
		a, err := r.Submit(pathBody, now)
		if err != nil {
			t.Fatal(err)
		}
		for step := 0; first == 0; step++ {
			cost, ok := r.Start(now)
			if !ok {
				t.Fatal("the engine could not step")
			}
			now = now.Add(cost)
			reported := false
			r.End(func(id, produced int, finished bool) {
				reported = true
				if id == a.ID && first == 0 {
					first = now.Sub(time.Unix(0, 0))
				}
			})
			if step == 0 && !reported {
				wait = cost
			}
		}
		return first, wait
	}
	bare, none := ttft(0)
	delayed, wait := ttft(pathOverhead)
	if none != 0 {
		t.Errorf("without a request overhead the first step waited %v", none)
	}
	if wait < pathOverhead/2 || wait >= pathOverhead*3/2 {
		t.Errorf("the wait for the request's arrival was %v: want within [%v, %v)", wait, pathOverhead/2, pathOverhead*3/2)
	}
	if delayed != bare+wait {
		t.Errorf("TTFT %v with the request path, %v without, wait %v: want the difference to be the wait", delayed, bare, wait)
	}
}

// A wait for a request on its way reports nothing, and a request canceled
// on its way leaves the replay idle at once.
func TestReplayWaitAndCancel(t *testing.T) {
	t.Parallel()
	r := pathReplay(t, pathOverhead)
	now := time.Unix(0, 0)
	a, _ := r.Submit(pathBody, now)
	if _, ok := r.Start(now); !ok || !r.Waiting() {
		t.Fatalf("an idle engine with a request on its way: start ok %v, waiting %v; want a wait", ok, r.Waiting())
	}
	r.End(func(id, produced int, finished bool) { t.Errorf("a wait reported request %d", id) })
	if r.Waiting() {
		t.Error("still waiting after End")
	}
	r.Cancel(a.ID)
	if r.Busy() {
		t.Error("a request canceled on its way kept the replay busy")
	}
	if _, ok := r.Start(now.Add(pathOverhead * 2)); ok {
		t.Error("a step ran for a request canceled on its way")
	}
}

// Sent a millisecond apart, each restarting the wait (as the load
// generator does on a send): the wait always ends at the earliest
// arrival, whichever was sent first, and some later send arrives before
// an earlier one.
func TestReplayWaitEndsAtTheFirstArrival(t *testing.T) {
	t.Parallel()
	r := pathReplay(t, pathOverhead)
	now := time.Unix(0, 0)
	overtaken := false
	for i := 0; i < 8; i++ {
		at := now.Add(time.Duration(i) * time.Millisecond)
		r.Submit(pathBody, at)
		wait, ok := r.Start(at)
		if !ok || !r.Waiting() {
			t.Fatalf("send %d: start ok %v, waiting %v; want a wait", i, ok, r.Waiting())
		}
		if first := r.delayed[0].arrived; !at.Add(wait).Equal(first) {
			t.Errorf("send %d: the wait ends at %v, the first arrival is at %v", i, at.Add(wait).Sub(now), first.Sub(now))
		}
		overtaken = overtaken || len(r.delayed) > 1 && r.delayed[0].tag > r.delayed[1].tag
		r.End(func(int, int, bool) {})
	}
	if !overtaken {
		t.Error("no later send arrived first: the case is not exercised")
	}
}

// A Request is planned as the body that says the same: prompt tokens,
// block hashes (so prefix cache hits), output and refusals alike, with
// prefix caching on and off.
func TestSubmitRequestPlansAsTheBody(t *testing.T) {
	t.Parallel()
	long, mid := strings.Repeat("word ", 9000), strings.Repeat("word ", 200)
	cases := []struct {
		name, body string
		q          Request
	}{
		{"chat", `{"max_tokens":5,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"one two three four"}]}`,
			Request{Chat: true, Roles: []string{"system", "user"}, Texts: []string{"be brief", "one two three four"}, MaxTokens: 5}},
		{"chat history", `{"max_tokens":7,"messages":[{"role":"user","content":"a b c"},{"role":"assistant","content":"d e"},{"role":"user","content":"f"}]}`,
			Request{Chat: true, Roles: []string{"user", "assistant", "user"}, Texts: []string{"a b c", "d e", "f"}, MaxTokens: 7}},
		{"long chat", `{"max_tokens":9,"messages":[{"role":"system","content":"` + mid + `"},{"role":"user","content":"` + mid + ` more"}]}`,
			Request{Chat: true, Roles: []string{"system", "user"}, Texts: []string{mid, mid + " more"}, MaxTokens: 9}},
		{"long completion", `{"max_tokens":9,"prompt":"` + mid + `"}`, Request{Texts: []string{mid}, MaxTokens: 9}},
		{"completions", `{"max_tokens":3,"prompt":"one two\n\nthree"}`,
			Request{Texts: []string{"one two\n\nthree"}, MaxTokens: 3}},
		{"too long", `{"max_tokens":5,"messages":[{"role":"user","content":"` + long + `"}]}`,
			Request{Chat: true, Roles: []string{"user"}, Texts: []string{long}, MaxTokens: 5}},
		{"no max_tokens left", `{"max_tokens":0,"prompt":"hi"}`, Request{Texts: []string{"hi"}}},
		{"no messages", `{"max_tokens":1,"messages":[]}`, Request{Chat: true, MaxTokens: 1}},
	}
	for _, caching := range []bool{false, true} {
		p, _ := Lookup("llama3-8b-h100")
		p.PrefixCaching = caching
		s := New(p)
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/caching=%v", c.name, caching), func(t *testing.T) {
				var req request
				if err := json.Unmarshal([]byte(c.body), &req); err != nil {
					t.Fatal(err)
				}
				want, werr := s.plan(&req, req.Messages != nil)
				got, err := s.planText(c.q)
				if fmt.Sprint(err) != fmt.Sprint(werr) {
					t.Fatalf("refused with %v; the body: %v", err, werr)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("planned %+v; the body %+v", got, want)
				}
				if caching && c.q.MaxTokens == 9 && len(want.hashes) == 0 {
					t.Errorf("no block hashes for %d tokens: the test compares none", want.prompt)
				}
			})
		}
	}
}
