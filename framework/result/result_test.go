package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/benchci/benchci/framework/metric"
)

func sampleFile(t *testing.T) *File {
	t.Helper()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ttft := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	if err := ttft.RecordValue(10_000); err != nil { // 10 ms in µs
		t.Fatal(err)
	}
	enc, err := EncodeHistogram(ttft)
	if err != nil {
		t.Fatal(err)
	}
	p := Measured{
		Requests:   Requests{Sent: 1, Completed: 1},
		Window:     Window{Start: t0, Seconds: 1},
		Throughput: Throughput{Requests: 1, OutputTokens: 2, TotalTokens: 3},
		Latency:    map[string]Summary{metric.TTFT: Summarize(ttft, 1000)},
		Histograms: map[string]string{metric.TTFT: enc},
	}
	return &File{Schema: Schema, Tool: Tool{Name: "benchci", Version: "test"},
		Suite:  Suite{Name: "s", Hash: "4f4be07bc1e7588e034c91c7740d95cc6f372e9465f65d0b7ef35e25eb8df310", Definition: json.RawMessage(`{"name":"s"}`)},
		Points: []Point{{Label: "rate=1", Mode: "rate", Rate: 1, Trial: 1, Measured: p}}}
}

func TestWriteReadRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "s.json")
	f := sampleFile(t)
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Points[0].Latency[metric.TTFT] != f.Points[0].Latency[metric.TTFT] || got.Suite.Hash != f.Suite.Hash {
		t.Errorf("round trip changed the file: %+v", got.Points[0].Latency[metric.TTFT])
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the results file (no temporaries)", len(entries))
	}
}

func TestReadRejectsBadFiles(t *testing.T) {
	t.Parallel()
	good, err := json.Marshal(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, data, want string
	}{
		{"truncated", string(good[:len(good)/2]), "truncated or corrupt"},
		{"empty", "", "truncated or corrupt"},
		{"other schema", `{"schema":"benchci.result/v0"}`, `schema "benchci.result/v0"`},
		{"not an object", `[1]`, "not a results file"},
		{"unknown field", `{"schema":"benchci.result/v1","surprise":1}`, "unknown field"},
		{"bad histogram", strings.Replace(string(good), `"ttft":"`, `"ttft":"!!`, 1), "histogram ttft"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name+".json")
		if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(path)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file and containing %q", tt.name, err, tt.want)
		}
	}
}

func TestWriteFailureKeepsOldFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The disk fills half-way through the write.
	full := func(f *os.File, b []byte) error {
		if _, err := f.Write(b[:len(b)/2]); err != nil {
			return err
		}
		return syscall.ENOSPC
	}
	err := writeAtomic(dir, path, []byte(strings.Repeat("new", 1000)), full)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want ENOSPC naming the file", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("old file now %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries left, want only the old file", len(entries))
	}
}

// FuzzParse feeds Parse arbitrary bytes: it must not panic, and whatever
// it accepts must write back into a file it accepts again.
func FuzzParse(f *testing.F) {
	v1, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v1)
	f.Add([]byte(`{"schema":"benchci.result/v2","points":[]}`))
	f.Add([]byte(`{"schema":"benchci.result/v1","target":{"sim_profile":{"step_base":1e300}}}`))
	f.Add([]byte(`{"schema":"benchci.result/v1","target":{"sim_profile":{"step_base":"x"}}}`))
	f.Add([]byte(`{"schema":"benchci.result/v2","points":[{"histograms":{"ttft":"HISTFAAAA"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(file)
		if err != nil {
			t.Fatalf("accepted a file it cannot write: %v", err)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("rejected its own output: %v\n%s", err, again)
		}
	})
}

// A v1 file migrates to v2 with the simulator's nanoseconds turned into
// milliseconds, and nothing else changed.
func TestMigrateV1(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var old struct {
		Target struct {
			Profile map[string]any `json:"sim_profile"`
		} `json:"target"`
		Points []Point `json:"points"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	sp := f.Target.Sim
	for ns, ms := range map[string]float64{"step_base": sp.StepBaseMs, "decode_per_seq": sp.DecodePerSeqMs, "prefill_per_token": sp.PrefillPerTokenMs} {
		if want := old.Target.Profile[ns].(float64) / 1e6; ms != want {
			t.Errorf("%s: %v ms, want %v", ns, ms, want)
		}
	}
	if sp.MaxNumSeqs != 256 || sp.Name != "llama3-70b-h100x4" {
		t.Errorf("other profile fields changed: %+v", sp)
	}
	if len(f.Points) != 1 || f.Points[0].Latency[metric.TTFT] != old.Points[0].Latency[metric.TTFT] ||
		f.Points[0].Histograms[metric.TTFT] != old.Points[0].Histograms[metric.TTFT] {
		t.Error("migration changed the points")
	}
	if _, err := Parse([]byte(`{"schema":"benchci.result/v0"}`)); err == nil || !strings.Contains(err.Error(), "benchci.result/v2") {
		t.Errorf("an unknown schema: %v", err)
	}
}
