package suite

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-multierror"
)

// base is a valid suite; each case lays its fields over it.
const base = `{"name":"x","target":{"kind":"sim","profile":"tiny"},"api":"chat",
	"workload":{"input_tokens":{"kind":"fixed","value":10},"output_tokens":{"kind":"fixed","value":5}},
	"sweep":{"rates":[1],"duration":"1s"}}`

// with lays patch (a JSON object) over base, object by object.
func with(t *testing.T, patch string) []byte {
	t.Helper()
	var b, p map[string]any
	if err := json.Unmarshal([]byte(base), &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatalf("%s: %v", patch, err)
	}
	merge(b, p)
	out, _ := json.Marshal(b)
	return out
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if d, ok := dst[k].(map[string]any); ok {
				merge(d, sub)
				continue
			}
		}
		dst[k] = v
	}
}

// problems lists a suite's validation errors as "path: msg".
func problems(t *testing.T, data []byte) []string {
	t.Helper()
	_, err := DecodeWith(data, nil) // as a suite file is read; Decode also clamps what was recorded
	if err == nil {
		return nil
	}
	var me *multierror.Error
	if !errors.As(err, &me) {
		t.Fatalf("not a list of field errors: %v", err)
	}
	var out []string
	for _, e := range me.Errors {
		out = append(out, e.Error())
	}
	return out
}

func TestBaseIsValid(t *testing.T) {
	t.Parallel()
	if p := problems(t, []byte(base)); p != nil {
		t.Fatal(p)
	}
}

// Every count that sizes what a run allocates or repeats is bounded, and
// the error names the field (suitefile puts its file:line before it).
func TestCountsAreBounded(t *testing.T) {
	t.Parallel()
	models := func(n int, weight string) string {
		var ms []string
		for i := range n {
			ms = append(ms, `{"name":"m`+strings.Repeat("x", i%3)+itoa(i)+`","weight":`+weight+`}`)
		}
		return `{"workload":{"models":[` + strings.Join(ms, ",") + `]}}`
	}
	for _, tc := range []struct {
		name, patch, want string
	}{
		{"trials 1e9", `{"trials":1e9}`, "trials: 1000000000 is more than the 100 trials"},
		{"images.count fixed(1000000) (F12)", `{"workload":{"images":{"count":{"kind":"fixed","value":1000000},"sizes":[{"width":64,"height":48}]}}}`, "workload.images.count.value: 1e+06 is more than the 32 a request may have"},
		{"images.count empirical", `{"workload":{"images":{"count":{"kind":"empirical","values":[1,64]},"sizes":[{"width":64,"height":48}]}}}`, "workload.images.count.values[1]: 64 is more than the 32"},
		{"image sizes", `{"workload":{"images":{"sizes":[` + strings.Repeat(`{"width":8,"height":8},`, 16) + `{"width":8,"height":8}]}}}`, "workload.images.sizes: 17 resolutions, more than the 16"},
		{"an 8192x8192 image", `{"workload":{"images":{"sizes":[{"width":8192,"height":8192}]}}}`, "workload.images.sizes[0]: resolution 8192x8192: 67.1 megapixels, more than the 16.8"},
		{"10,000 models (M7)", models(10000, "1"), "workload.models: 10000 models, more than the 256 a mix may have"},
		{"an infinite weight", `{"workload":{"models":[{"name":"a","weight":1},{"name":"b","weight":"inf"}]}}`, "workload.models[1].weight: want a number"},
		{"embeddings batch", `{"api":"embeddings","workload":{"batch":{"kind":"uniform","min":1,"max":100000}}}`, "workload.batch.max: 100000 is more than the 2048"},
		{"multi_turn turns", `{"workload":{"prompts":{"kind":"multi_turn","turns":1000000}}}`, "workload.prompts.turns: 1000000 is more than the 256 turns"},
		{"prefixes", `{"workload":{"prompts":{"kind":"shared_prefix","prefixes":100000,"prefix_tokens":10}}}`, "workload.prompts.prefixes: 100000 is more than the 1024"},
		{"prefix tokens", `{"workload":{"prompts":{"kind":"shared_prefix","prefixes":1000,"prefix_tokens":1000000000}}}`, "workload.prompts.prefix_tokens: 1000 prefixes of 1000000000 tokens are more than the 4000000"},
		{"concurrency", `{"sweep":{"rates":null,"concurrencies":[1,1e9]}}`, "sweep.concurrencies[1]: 1000000000 requests in flight"},
		{"max_concurrency", `{"sweep":{"max_concurrency":1e9}}`, "sweep.max_concurrency: 1000000000 requests in flight"},
		{"points", `{"sweep":{"rates":[` + strings.TrimSuffix(strings.Repeat("1,", 1001), ",") + `]}}`, "sweep.rates: 1001 points, more than the 1000"},
		{"auto points", `{"sweep":{"kind":"auto","rates":null,"points":1e6}}`, "sweep.points: 1000000 is more than the 1000"},
		{"warmup requests", `{"target":{"kind":"launch","profile":null,"url":"http://127.0.0.1:8000","launch":{"command":["x"],"warmup_requests":1e9}}}`, "target.launch.warmup_requests: 1000000000 is more than the 10000"},
		{"empirical values", `{"workload":{"input_tokens":{"kind":"empirical","value":null,"values":[` + strings.TrimSuffix(strings.Repeat("1,", MaxEmpiricalValues+1), ",") + `]}}}`, "workload.input_tokens.values: 65537 values"},
		{"a throughput SLO of 1e13", `{"slos":[{"metric":"output_throughput","op":">","threshold":1e13}]}`, "slos[0].threshold: 1e+13 is beyond any figure a run records"},
		{"a TTFT SLO of a million hours", `{"slos":[{"metric":"ttft","stat":"p99","op":"<","threshold":"1000000h"}]}`, "1000000h is beyond any figure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problems(t, with(t, tc.patch))
			if !strings.Contains(strings.Join(p, "\n"), tc.want) {
				t.Errorf("problems %q, want one saying %q", p, tc.want)
			}
		})
	}
	// At the bounds: accepted.
	for _, patch := range []string{
		`{"trials":100}`,
		models(256, "1"),
		models(2, "1e308"),
		`{"workload":{"images":{"count":{"kind":"fixed","value":32},"sizes":[{"width":4096,"height":4096},{"width":8192,"height":2048}]}}}`,
		`{"workload":{"prompts":{"kind":"multi_turn","turns":256}}}`,
		`{"workload":{"prompts":{"kind":"shared_prefix","prefixes":1000,"prefix_tokens":4000}}}`,
	} {
		if p := problems(t, with(t, patch)); p != nil {
			t.Errorf("%.200s: %q", patch, p)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Two interleaved launches on one port are found however the host is
// written (127.0.0.1 and localhost were not); other ports, or other
// machines, are not.
func TestInterleavedLaunchesOnOnePort(t *testing.T) {
	t.Parallel()
	suite := func(a, b string) []byte {
		return with(t, `{"target":null,"order":"interleaved","variants":{
			"a":{"target":{"kind":"launch","url":"`+a+`","launch":{"command":["serve"]}}},
			"b":{"target":{"kind":"launch","url":"`+b+`","launch":{"command":["serve"]}}}}}`)
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://127.0.0.1:8000", "http://localhost:8000", true},
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000", true},
		{"http://[::1]:8000", "http://LOCALHOST:8000", true},
		{"http://0.0.0.0:8000", "http://127.0.0.1:8000", true},
		{"http://localhost", "http://127.0.0.1:80", true},
		{"http://127.0.0.1:8000", "http://localhost:8001", false},
		{"http://gpu-a:8000", "http://gpu-b:8000", false},
		{"http://localhost:443", "https://localhost", true},
	} {
		p := problems(t, suite(tc.a, tc.b))
		got := strings.Contains(strings.Join(p, "\n"), "launches one at")
		if got != tc.same {
			t.Errorf("%s and %s: problems %q, want a clash: %v", tc.a, tc.b, p, tc.same)
		}
	}
}

// FuzzLaunchKey: no URL makes it panic, and the loopback spellings of
// one port agree.
func FuzzLaunchKey(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]", "https://x:99999", "::", "http://%zz", ""} {
		f.Add(s, "8000")
	}
	f.Fuzz(func(t *testing.T, raw, port string) {
		launchKey(raw)
		if strings.ContainsAny(port, "/?#@[]%") || port == "" {
			return
		}
		a, b := launchKey("http://127.0.0.1:"+port), launchKey("http://localhost:"+port)
		if a != b {
			t.Fatalf("127.0.0.1:%s is %q, localhost:%s is %q", port, a, port, b)
		}
	})
}
