package suite

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzDecode feeds arbitrary JSON to the decoder: it must return a suite or
// an error, never panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name":"x","target":{"kind":"sim","profile":"tiny"},"workload":{"input_tokens":{"kind":"fixed","value":1},"output_tokens":{"kind":"fixed","value":1}},"sweep":{"rates":[1]}}`))
	f.Add([]byte(`{"sweep":{"rates":[1,"x",null,{}]},"slos":[{"metric":"ttft","threshold":[]}],"tolerance":{"a":1}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"request":{"retry":{"budget":0}}}`))
	f.Add([]byte(`{"trials":1e300,"request":{"timeout":"-1s","extra":{"a":[1,{"b":2}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if (s == nil) == (err == nil) {
			t.Fatalf("Decode returned suite %v and error %v", s, err)
		}
	})
}

// A definition recorded with retry budget 0 (no cap, until f069c87) reads
// as no cap; any other budget, and a suite evaluated now, are as they are.
func TestDecodeMigratesRecordedBudgetZero(t *testing.T) {
	t.Parallel()
	const base = `{"name":"x","target":{"kind":"sim","profile":"tiny"},"workload":{"input_tokens":{"kind":"fixed","value":1},"output_tokens":{"kind":"fixed","value":1}},"sweep":{"rates":[1]},"request":{"timeout":"1m","retry":{"on":["429"],"max_attempts":3%s}}}`
	for _, c := range []struct {
		name, budget string
		want         *float64
		err          string
	}{
		{"recorded as 0", `,"budget":0`, nil, ""},
		{"recorded as 0.0", `,"budget":0.0`, nil, ""},
		{"a share", `,"budget":0.25`, ptr(0.25), ""},
		{"none", ``, nil, ""},
		{"out of bounds", `,"budget":2`, nil, "budget"},
	} {
		s, err := Decode([]byte(fmt.Sprintf(base, c.budget)))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want one naming %q", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case (s.Request.Retry.Budget == nil) != (c.want == nil) || c.want != nil && *s.Request.Retry.Budget != *c.want:
			t.Errorf("%s: budget %v, want %v", c.name, s.Request.Retry.Budget, c.want)
		}
	}
	// What a suite evaluated now says is not migrated: 0 is refused.
	if _, err := DecodeWith([]byte(fmt.Sprintf(base, `,"budget":0`)), nil); err == nil || !strings.Contains(err.Error(), "leave it out for no cap") {
		t.Errorf("a suite of now with budget 0: %v", err)
	}
}

// A definition recorded before its times or trials were bounded reads
// with them at the bound; a suite evaluated now past a bound is refused.
func TestDecodeClampsWhatWasRecordedBeforeABound(t *testing.T) {
	t.Parallel()
	const def = `{"name":"x","target":{"kind":"launch","url":"http://127.0.0.1:8000","launch":{"command":["srv"],"start_timeout":"3h","stop_grace":"1h"},"proxy":{"latency":"1h","retry_after":"20m","stall":"11m","stall_rate":0.1,"slow_first_byte":"2h"}},` +
		`"workload":{"input_tokens":{"kind":"fixed","value":1},"output_tokens":{"kind":"fixed","value":1},"prompts":{"think_time":"72h"}},"sweep":{"rates":[1]},"trials":200,"request":{"timeout":"48h"},` +
		`"telemetry":[{"name":"dcgm","url":"http://127.0.0.1:9400/metrics","interval":"5m"}],` +
		`"variants":{"b":{"target":{"kind":"launch","url":"http://127.0.0.1:8001","launch":{"command":["srv"],"start_timeout":"9h"}}}}}`
	s, err := Decode([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want Duration
	}{
		{"request.timeout", s.Request.Timeout, MaxWait},
		{"think_time", s.Workload.Prompts.ThinkTime, MaxWait},
		{"start_timeout", s.Target.Launch.StartTimeout, MaxStartTimeout},
		{"stop_grace", s.Target.Launch.StopGrace, MaxStopGrace},
		{"proxy.latency", s.Target.Proxy.Latency, MaxFaultDelay},
		{"proxy.retry_after", s.Target.Proxy.RetryAfter, MaxFaultDelay},
		{"proxy.stall", s.Target.Proxy.Stall, MaxFaultDelay},
		{"proxy.slow_first_byte", s.Target.Proxy.SlowFirstByte, MaxFaultDelay},
		{"telemetry interval", s.Telemetry[0].Interval, Duration(time.Minute)},
		{"variant start_timeout", s.Variants["b"].Target.Launch.StartTimeout, MaxStartTimeout},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got.D(), c.want.D())
		}
	}
	if s.Trials != MaxTrials {
		t.Errorf("trials: %d, want %d", s.Trials, MaxTrials)
	}
	_, err = DecodeWith([]byte(def), nil)
	for _, field := range []string{"request.timeout", "trials", "launch.start_timeout", "launch.stop_grace", "proxy", "interval", "variants.b.target.launch.start_timeout"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("a suite of now past the bound at %s: %v", field, err)
		}
	}
}

func ptr(f float64) *float64 { return &f }
