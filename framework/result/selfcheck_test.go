package result_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// committedBaseline is a baseline recorded by a real run: its result has
// slices, a definition and its hash.
const committedBaseline = "../../baselines/quickstart.json"

// decodeTree decodes JSON keeping every number as written, so that what
// a forgery leaves alone is left byte for byte.
func decodeTree(t *testing.T, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	n, err := v.(json.Number).Float64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// scale multiplies the numbers m holds under keys, where present.
func scale(t *testing.T, m map[string]any, by float64, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			m[k] = json.Number(strings.TrimSuffix(strings.TrimSuffix(
				json.Number(fmtFloat(num(t, v)*by)).String(), ".0"), ".00"))
		}
	}
}

func fmtFloat(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// stretchWindows is the consistent forgery of a baseline: every point's
// window doubled, its throughputs and schedule rates halved, its costs
// per token doubled, and the summary at the top made to say the same, so
// that every count the verifier ties to throughput and window still adds
// up and the baseline's summary still matches its result. A 50%
// throughput regression then compares as no change.
func stretchWindows(t *testing.T, doc map[string]any, dropSlices bool) {
	t.Helper()
	res := doc["result"].(map[string]any)
	for _, p := range res["points"].([]any) {
		p := p.(map[string]any)
		scale(t, p["window"].(map[string]any), 2, "seconds")
		scale(t, p["throughput"].(map[string]any), 0.5, "requests", "output_tokens", "total_tokens", "goodput", "embeddings")
		scale(t, p["schedule"].(map[string]any), 0.5, "scheduled_rate", "send_rate")
		if c, ok := p["cost"].(map[string]any); ok {
			scale(t, c, 2, "usd_per_m_output_tokens", "usd_per_m_total_tokens")
		}
		if dropSlices {
			delete(p, "slices")
		}
	}
	for _, s := range doc["summary"].([]any) {
		f := s.(map[string]any)["figures"].(map[string]any)
		scale(t, f, 0.5, "output_throughput", "request_throughput", "total_throughput", "goodput")
		scale(t, f, 2, "cost", "cost_total")
	}
}

func editDefinition(edit func(def map[string]any)) func(*testing.T, map[string]any) {
	return func(t *testing.T, doc map[string]any) {
		edit(doc["result"].(map[string]any)["suite"].(map[string]any)["definition"].(map[string]any))
	}
}

// Each forgery of a committed baseline is refused, for its own reason.
func TestVerifyRefusesForgedBaselines(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(committedBaseline)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		forge func(*testing.T, map[string]any)
		want  string // "": the forgery is otherwise consistent and reads
	}{
		{"tolerance loosened to 1000%", editDefinition(func(d map[string]any) { d["tolerance"] = map[string]any{"default": "1000%"} }),
			"its stored suite definition no longer hashes to its suite.hash (edited after it was measured)"},
		{"SLOs dropped", editDefinition(func(d map[string]any) { d["slos"] = []any{} }),
			"its stored suite definition no longer hashes to its suite.hash (edited after it was measured)"},
		{"windows doubled, throughputs halved, costs doubled", func(t *testing.T, d map[string]any) { stretchWindows(t, d, false) },
			"the window is longer than the point ran"},
		// The same forgery of a file without slices passes every other
		// check: only the slices catch it.
		{"control: the same without slices", func(t *testing.T, d map[string]any) { stretchWindows(t, d, true) }, ""},
		{"control: unchanged", func(*testing.T, map[string]any) {}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc := decodeTree(t, data)
			c.forge(t, doc)
			forged, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "forged.json")
			if err := os.WriteFile(path, forged, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = baseline.Read(path)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path)):
				t.Fatalf("error %v, want one naming the file and saying %q", err, c.want)
			}
		})
	}
}

// Every committed baseline and results file still reads: the checks
// refuse no file a run wrote.
func TestCommittedFilesVerify(t *testing.T) {
	t.Parallel()
	baselines, _ := filepath.Glob("../../baselines/*.json")
	if len(baselines) == 0 {
		t.Fatal("no committed baselines found")
	}
	files := append(baselines,
		"testdata/quickstart-v1.json", "testdata/v1.json",
		"../../cmd/benchci/testdata/candidate.json",
		"../../cmd/benchci/testdata/simfit/simfit-closed.json",
		"../../cmd/benchci/testdata/simfit/simfit-open.json")
	for _, p := range files {
		f, err := baseline.ReadReference(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if err := f.Suite.CheckHash(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A definition with encoding/json's HTML escapes, as result.Write leaves
// it, hashes as the unescaped one did; an escaped backslash is not an
// escape to undo.
func TestCheckHashEscapes(t *testing.T) {
	t.Parallel()
	raw := `{"op":"<","s":"a\\u003c"}`
	f := result.Suite{Hash: sha(raw), Definition: json.RawMessage(`{"op": "\u003c", "s": "a\\u003c"}`)}
	if err := f.CheckHash(); err != nil {
		t.Errorf("escaped: %v", err)
	}
	f.Definition = json.RawMessage(`{"op":"<","s":"a<"}`)
	if err := f.CheckHash(); err == nil {
		t.Error("an escaped backslash was unescaped")
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
