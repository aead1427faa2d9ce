package configdiff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

// file is a results file whose recorded suite has target, run against
// url with the server naming model and engine.
func file(t *testing.T, target map[string]any, engine *result.Engine) *result.File {
	t.Helper()
	def, err := json.Marshal(map[string]any{"name": "s", "target": target, "sweep": map[string]any{"kind": "rate", "rates": []any{8}}})
	if err != nil {
		t.Fatal(err)
	}
	model, _ := target["model"].(string)
	return &result.File{Suite: result.Suite{Name: "s", WorkloadHash: "w", Definition: def},
		Target: result.Target{Kind: target["kind"].(string), URL: "http://127.0.0.1:40000", Model: model}, Engine: engine}
}

func launch(argv []string, env map[string]string) map[string]any {
	return map[string]any{"kind": "launch", "url": "http://127.0.0.1:8000", "model": "llama",
		"launch": map[string]any{"command": argv, "env": env}}
}

var vllm = []string{"vllm", "serve", "meta-llama/Llama-3.1-8B", "--max-num-seqs", "256", "--gpu-memory-utilization=0.9", "--enable-prefix-caching"}

// Every kind of config change a pull request makes is named, with both
// values (a secret's hidden), and nothing else is.
func TestDiff(t *testing.T) {
	with := func(i int, v string) []string {
		a := append([]string(nil), vllm...)
		a[i] = v
		return a
	}
	env := map[string]string{"VLLM_ATTENTION_BACKEND": "FLASH_ATTN", "HF_TOKEN": "hf_secretvalue1"}
	eng := &result.Engine{Name: "vllm", Version: "0.8.0"}
	for _, tc := range []struct {
		name       string
		base, cand *result.File
		want       []string // each change, as Change.String
	}{
		{"a launch flag's value", file(t, launch(vllm, env), eng), file(t, launch(with(4, "128"), env), eng),
			[]string{"launch --max-num-seqs: 256 → 128"}},
		{"a --flag=value", file(t, launch(vllm, env), eng), file(t, launch(with(5, "--gpu-memory-utilization=0.95"), env), eng),
			[]string{"launch --gpu-memory-utilization: 0.9 → 0.95"}},
		{"a switch dropped", file(t, launch(vllm, env), eng), file(t, launch(vllm[:6], env), eng),
			[]string{"launch --enable-prefix-caching: (set) → (none)"}},
		{"a flag added", file(t, launch(vllm, env), eng), file(t, launch(append(append([]string(nil), vllm...), "--quantization", "fp8"), env), eng),
			[]string{"launch --quantization: (none) → fp8"}},
		{"the model served", file(t, launch(vllm, env), eng), file(t, launch(with(2, "meta-llama/Llama-3.1-70B"), env), eng),
			[]string{"launch argument 3: meta-llama/Llama-3.1-8B → meta-llama/Llama-3.1-70B"}},
		{"an environment variable", file(t, launch(vllm, env), eng),
			file(t, launch(vllm, map[string]string{"VLLM_ATTENTION_BACKEND": "FLASHINFER", "HF_TOKEN": "hf_secretvalue1"}), eng),
			[]string{"env VLLM_ATTENTION_BACKEND: FLASH_ATTN → FLASHINFER"}},
		{"a secret, never shown", file(t, launch(vllm, env), eng),
			file(t, launch(vllm, map[string]string{"VLLM_ATTENTION_BACKEND": "FLASH_ATTN", "HF_TOKEN": "hf_othersecret2"}), eng),
			[]string{"env HF_TOKEN: (hidden) → (hidden), changed"}},
		{"the engine's version", file(t, launch(vllm, env), eng), file(t, launch(vllm, env), &result.Engine{Name: "vllm", Version: "0.9.1"}),
			[]string{"engine (as the server reported it): vllm 0.8.0 → vllm 0.9.1"}},
		{"a simulator override", file(t, map[string]any{"kind": "sim", "profile": "tiny", "sim": map[string]any{"step_base": "10ms"}}, nil),
			file(t, map[string]any{"kind": "sim", "profile": "tiny", "sim": map[string]any{"step_base": "11ms"}}, nil),
			[]string{"sim step_base: 10ms → 11ms"}},
		{"a simulator profile", file(t, map[string]any{"kind": "sim", "profile": "tiny"}, nil), file(t, map[string]any{"kind": "sim", "profile": "llama3-8b-h100"}, nil),
			[]string{"sim profile: tiny → llama3-8b-h100"}},
		{"the URL", file(t, map[string]any{"kind": "url", "url": "http://127.0.0.1:8000"}, eng), file(t, map[string]any{"kind": "url", "url": "http://127.0.0.1:9000"}, eng),
			[]string{"url: http://127.0.0.1:8000 → http://127.0.0.1:9000"}},
		{"the model asked", file(t, map[string]any{"kind": "url", "url": "http://127.0.0.1:8000", "model": "a"}, eng),
			file(t, map[string]any{"kind": "url", "url": "http://127.0.0.1:8000", "model": "b"}, eng),
			[]string{"model asked: a → b", "model (as the server named it): a → b"}},
		{"a reordered command is the same", file(t, launch(vllm, env), eng),
			file(t, launch([]string{"vllm", "serve", "meta-llama/Llama-3.1-8B", "--enable-prefix-caching", "--gpu-memory-utilization=0.9", "--max-num-seqs", "256"}, env), eng), nil},
		{"a rerun", file(t, launch(vllm, env), eng), file(t, launch(vllm, env), eng), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.base, tc.cand)
			var s []string
			for _, c := range got {
				s = append(s, c.String())
			}
			if strings.Join(s, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(s, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for _, c := range got {
				if strings.Contains(c.String(), "secretvalue") || strings.Contains(c.String(), "othersecret") {
					t.Errorf("a secret shown: %v", c)
				}
			}
		})
	}
}

// A changed workload names the fields that moved.
func TestDiffWorkload(t *testing.T) {
	b := file(t, map[string]any{"kind": "sim", "profile": "tiny"}, nil)
	c := file(t, map[string]any{"kind": "sim", "profile": "tiny"}, nil)
	c.Suite.WorkloadHash = "other"
	c.Suite.Definition = json.RawMessage(strings.Replace(string(c.Suite.Definition), `"rates":[8]`, `"rates":[8,16]`, 1))
	got := Diff(b, c)
	if len(got) != 1 || got[0].String() != "workload: sweep.rates: [8] → [8,16]" {
		t.Errorf("%v", got)
	}
}
