package baseline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/recorder"
)

func sampleResult(t *testing.T) *result.File {
	t.Helper()
	t0 := time.Unix(1000, 0)
	rec := recorder.NewRecorder(t0, t0.Add(time.Second))
	for i := range 20 {
		r := &client.Result{Sent: t0, FirstToken: time.Duration(10+i) * time.Millisecond, End: 50 * time.Millisecond, OutputTokens: 2,
			ChunkAt: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}, ChunkTokens: []int32{1, 1}}
		rec.Add(recorder.Sample{Result: r, Scheduled: t0})
	}
	p, err := rec.Point()
	if err != nil {
		t.Fatal(err)
	}
	return &result.File{Schema: result.Schema, Suite: result.Suite{Name: "s", WorkloadHash: "w", Hash: "h"},
		Points: []result.Point{{Label: "rate=1", Mode: "rate", Rate: 1, Trial: 1, Measured: p}}}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b, err := FromResult(sampleResult(t), "c0ffee")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Summary) != 1 || b.Summary[0].Figures["ttft.p50"] == 0 || b.Provenance.Commit != "c0ffee" {
		t.Fatalf("baseline %+v", b)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := Write(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary[0].Figures["ttft.p50"] != b.Summary[0].Figures["ttft.p50"] || got.Result.Points[0].Label != "rate=1" {
		t.Errorf("round trip changed the baseline")
	}
	// Stable formatting: writing the same baseline twice gives the same bytes.
	first, _ := os.ReadFile(path)
	if err := Write(path, got); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(path)
	if string(first) != string(second) {
		t.Error("rewriting the baseline changed its bytes")
	}
}

func TestRefusesAndRejects(t *testing.T) {
	t.Parallel()
	r := sampleResult(t)
	r.Incomplete, r.Error = true, "stopped"
	if _, err := FromResult(r, ""); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("incomplete run: %v", err)
	}
	dir := t.TempDir()
	if _, err := Read(filepath.Join(dir, "none.json")); !errors.Is(err, ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	b, _ := FromResult(sampleResult(t), "")
	good := filepath.Join(dir, "good.json")
	if err := Write(good, b); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	for name, bad := range map[string]string{
		"truncated": string(data[:len(data)/3]),
		"edited":    strings.Replace(string(data), `"suite": "s"`, `"suite": "other"`, 1),
		"schema":    strings.Replace(string(data), Schema, "benchci.baseline/v9", 1),
	} {
		path := filepath.Join(dir, name+".json")
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// FuzzParse feeds the baseline reader arbitrary bytes: no panic, and what
// it accepts writes back into a baseline it accepts again.
func FuzzParse(f *testing.F) {
	committed, err := os.ReadFile("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(committed)
	f.Add([]byte(`{"schema":"benchci.baseline/v1","suite":"s","result":{"schema":"benchci.result/v2","suite":{"name":"s"},"points":[]}}`))
	f.Add([]byte(`{"schema":"benchci.baseline/v1","result":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse(data)
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "b.json")
		if err := Write(path, b); err != nil {
			t.Fatalf("accepted a baseline it cannot write: %v", err)
		}
		if _, err := Read(path); err != nil {
			t.Fatalf("rejected its own output: %v", err)
		}
	})
}
