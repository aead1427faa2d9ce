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
		Suite:  Suite{Name: "s", Hash: "abc", Definition: json.RawMessage(`{"name":"s"}`)},
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
	if got.Points[0].Latency[metric.TTFT] != f.Points[0].Latency[metric.TTFT] || got.Suite.Hash != "abc" {
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
	err := writeAtomic(path, []byte(strings.Repeat("new", 1000)), full)
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
