package workload

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/inputfile"
)

// A trace's timestamps are finite, not negative, in order and within a
// week of the first; its lengths within suite.MaxTokens; its block ids
// bounded. Each bad line is refused with its number (F8: timestamps 0 and
// 1e300 gave a point of 0 requests; out-of-order and overflowing ones
// were taken silently; F9: an input_length of 102400000 passed validate
// and the run took 9.4 GB).
func TestTraceBounds(t *testing.T) {
	t.Parallel()
	ids := strings.TrimSuffix(strings.Repeat("1,", MaxEntryHashIDs+1), ",")
	for in, want := range map[string]string{
		"{\"timestamp\": 0}\n{\"timestamp\": 1e300}\n":                                "2: timestamp 1e+300s is 1e+300 s after the first request's, more than the 168h0m0s",
		"{\"timestamp\": 5}\n{\"timestamp\": 604806}\n":                               "2: timestamp 604806s is 6.048e+05 s after",
		"{\"timestamp_ms\": 1e309}\n":                                                 "1: json: cannot unmarshal number 1e309",
		"{\"timestamp\": 2}\n{\"timestamp\": 1}\n":                                    "2: timestamp 1s is before the 2s of the request above it",
		"{\"timestamp\": 0, \"input_length\": 102400000, \"output_length\": 10}\n":    "1: 102400000 tokens is beyond any model's context (at most 4000000)",
		"{\"timestamp\": 0, \"input_tokens\": 10, \"output_tokens\": 4000001}\n":      "1: 4000001 tokens is beyond",
		"{\"timestamp\": 0, \"input_tokens\": 1e20}\n":                                "1: json: cannot unmarshal number 1e20",
		"{\"timestamp\": 0, \"hash_ids\": [" + ids + "]}\n":                           "1: hash_ids: 16385 block ids, more than the 16384",
		"{\"timestamp\": 0, \"hash_ids\": [" + strings.Repeat("1,", 600000) + "1]}\n": "1: a line longer than 1 MiB",
	} {
		_, err := ParseTrace(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTrace(%.80q) error %v, want %q", in, err, want)
		}
		// validate reads it through the same checks.
		if err2 := ScanTrace(strings.NewReader(in), func(TraceEntry) {}); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("ScanTrace(%.80q) error %v, want ParseTrace's %v", in, err2, err)
		}
	}
	// At the bounds: a week's span, equal times, 4M tokens, 16384 ids.
	in := "{\"timestamp\": 5, \"hash_ids\": [" + strings.TrimSuffix(strings.Repeat("7,", MaxEntryHashIDs), ",") + "]}\n" +
		"{\"timestamp\": 5, \"input_tokens\": 4000000, \"output_tokens\": 4000000}\n{\"timestamp\": 604805}\n"
	tr, err := ParseTrace(strings.NewReader(in))
	if err != nil || tr.Len() != 3 || len(tr.Entry(0).HashIDs) != MaxEntryHashIDs || tr.Entry(1).InputTokens != suite.MaxTokens {
		t.Fatalf("a trace at the bounds: %v", err)
	}
}

// lines streams n trace lines without holding them.
type lines struct {
	n, i int
	line func(i int) string
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	for len(l.buf) < len(p) && l.i < l.n {
		l.buf = append(l.buf, l.line(l.i)...)
		l.i++
	}
	if len(l.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// A trace of MaxTraceEntries requests is held in about 20 bytes a
// request (F10: an 840 MB trace took 1.84 GB); one more is refused at its
// line, and the reading stops there.
func TestTraceEntriesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 2,000,001 lines")
	}
	t.Parallel()
	src := &lines{n: 3 * MaxTraceEntries, line: func(i int) string { return fmt.Sprintf("{\"timestamp\":%d}\n", i/1000) }}
	tr := &Trace{}
	err := ScanTrace(src, tr.add) // as ParseTrace, keeping what came before the error
	if err == nil || !strings.Contains(err.Error(), "2000001: more than the 2000000 requests a trace may have") {
		t.Errorf("one request too many: %v", err)
	}
	// Read no further than the scanner's buffer past the bound.
	if src.i > MaxTraceEntries+8192 {
		t.Errorf("read on to line %d after the bound", src.i)
	}
	held := cap(tr.at)*8 + cap(tr.in)*4 + cap(tr.out)*4 + cap(tr.idEnd)*4 + cap(tr.ids)*8
	if tr.Len() != MaxTraceEntries || held > 64<<20 {
		t.Errorf("%d requests held in %d MiB", tr.Len(), held>>20)
	}
}

// The block ids of a whole trace are bounded too.
func TestTraceHashIDsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 8,000,000 block ids")
	}
	t.Parallel()
	ids := strings.TrimSuffix(strings.Repeat("1,", MaxEntryHashIDs), ",")
	n := MaxTraceHashIDs/MaxEntryHashIDs + 1
	err := ScanTrace(&lines{n: n, line: func(int) string { return "{\"timestamp\":0,\"hash_ids\":[" + ids + "]}\n" }}, func(TraceEntry) {})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d: hash_ids: more than the 8000000 block ids a trace may have in all", n)) {
		t.Errorf("%v", err)
	}
}

// validate's reading of a trace (CheckTrace, and Check of a suite naming
// one) gives a run's errors, with the file's path and the line.
func TestCheckReadsTheTraceAsARun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 1, \"input_length\": 102400000, \"output_length\": 5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, runErr := LoadTrace(path)
	s := &suite.Suite{API: "completions", Workload: suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 10}, OutputTokens: suite.Dist{Kind: "fixed", Value: 5},
		Arrival: suite.Arrival{Kind: suite.ArrivalTrace, Path: path}, Prompts: suite.Prompts{Kind: suite.PromptSynthetic}}}
	checkErr := Check(s)
	want := path + ":2: 102400000 tokens is beyond any model's context"
	if runErr == nil || checkErr == nil || !strings.Contains(runErr.Error(), want) || runErr.Error() != checkErr.Error() {
		t.Errorf("run: %v\nvalidate: %v\nwant both %q", runErr, checkErr, want)
	}
	// A FIFO is refused, not waited on.
	fifo := filepath.Join(dir, "f.jsonl")
	if err := mkfifo(fifo); err == nil {
		s.Workload.Arrival.Path = fifo
		if err := Check(s); !errors.Is(err, inputfile.ErrNotRegular) {
			t.Errorf("a FIFO: %v", err)
		}
	}
}

// A file of lengths is held as 4-byte counts and draws what it drew as
// float64s; a length past suite.MaxTokens is refused with its line, not
// clipped.
func TestLengthsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "l.jsonl")
	if err := os.WriteFile(path, []byte("{\"n\": 3}\n{\"n\": 7.4}\n{\"n\": 12, \"x\": [1]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := samples(t, suite.Dist{Kind: suite.DistFile, Path: path, Field: "n"}, 300)
	seen := map[float64]int{}
	for _, v := range got {
		seen[v]++
	}
	if len(seen) != 3 || seen[3] == 0 || seen[7] == 0 || seen[12] == 0 {
		t.Errorf("draws %v, want 3, 7 and 12", seen)
	}
	for in, want := range map[string]string{
		"{\"n\": 3}\n{\"n\": 102400000}\n": "2: n is 1.024e+08 tokens, beyond any model's context",
		"{\"n\": 0.5}\n":                   "1: n is 0.5, want a length of at least 1",
		"{\"m\": 3}\n":                     "1: n is <nil>",
		"{\"n\": \"3\"}\n":                 "1: n is \"3\"",
		"":                                 "no lines",
	} {
		if err := parseLengths(strings.NewReader(in), "n", func(uint32) {}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseLengths(%q): %v, want %q", in, err, want)
		}
	}
}

// FuzzParseLengths: no file of lengths panics, and every length kept is
// between 1 and suite.MaxTokens.
func FuzzParseLengths(f *testing.F) {
	for _, s := range []string{"{\"n\": 3}\n", "{\"n\": 1e300}\n{\"n\": -1}\n", "{\"n\": 4000000.4}\n", "[1]\nnull\n{\"n\": {}}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_ = parseLengths(strings.NewReader(in), "n", func(v uint32) {
			if v < 1 || v > suite.MaxTokens {
				t.Fatalf("length %d kept", v)
			}
		})
	})
}

// A dataset is bounded in the text it keeps, refused at the prompt that
// passes the bound, and read a line at a time meanwhile.
func TestDatasetTextBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 129 MiB")
	}
	t.Parallel()
	prompt := strings.Repeat("a", 1<<20)
	n := 0
	err := scanJSONL(&lines{n: 200, line: func(int) string { return "{\"prompt\": \"" + prompt + "\"}\n" }}, func(DatasetEntry) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "129: more than the 128 MiB of prompt text a dataset may hold") || n != 128 {
		t.Errorf("%d prompts, %v", n, err)
	}
	// ShareGPT, too, conversation by conversation.
	conv := `{"conversations":[{"from":"human","value":"` + prompt + `"},{"from":"gpt","value":"ok"}]}`
	src := &lines{n: 200, line: func(i int) string {
		switch i {
		case 0:
			return "[" + conv
		case 199:
			return "," + conv + "]"
		}
		return "," + conv
	}}
	if err := scanShareGPT(src, func(DatasetEntry) error { return nil }); err == nil || !strings.Contains(err.Error(), "conversation 129: more than the 128 MiB") {
		t.Errorf("ShareGPT: %v", err)
	}
}

// A ShareGPT conversation is bounded as it is read, not after.
func TestShareGPTConversationBounded(t *testing.T) {
	t.Parallel()
	big := strings.NewReader(`[{"conversations":[{"from":"human","value":"` + strings.Repeat("a", maxConversation+1<<20) + `"},{"from":"gpt","value":"ok"}]}]`)
	if _, err := ParseShareGPT(big); err == nil || !strings.Contains(err.Error(), "conversation 1 is more than 64 MiB of JSON") {
		t.Errorf("%v", err)
	}
}

// An output length past suite.MaxTokens is a bad line of a dataset, and
// an entry without one is too when the workload draws none (validate
// says so with the line, as a run does with the entry).
func TestDatasetLengths(t *testing.T) {
	t.Parallel()
	if _, err := ParseJSONL(strings.NewReader("{\"prompt\": \"a\", \"output_tokens\": 102400000}\n")); err == nil || !strings.Contains(err.Error(), "1: output_tokens 102400000 is beyond") {
		t.Errorf("%v", err)
	}
	path := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(path, []byte("{\"prompt\": \"a\", \"output_tokens\": 3}\n{\"prompt\": \"b\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckDataset(suite.PromptJSONL, path, true); err == nil || !strings.Contains(err.Error(), "d.jsonl:2: records no output length") {
		t.Errorf("%v", err)
	}
	if err := CheckDataset(suite.PromptJSONL, path, false); err != nil {
		t.Error(err)
	}
}

// writePNG writes a valid PNG header and pads the file to size bytes
// (sparse: no disk is used).
func writePNG(t *testing.T, path string, size int64) {
	t.Helper()
	var b bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.White)
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if size > int64(b.Len()) {
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
	}
}

// An image directory is refused by its files' sizes before one is read
// (F11: one 300 MB .png took 1.57 GB in validate): a file past
// MaxImageFile, or files past MaxImageBytes in all.
func TestImageFilesRefusedBySize(t *testing.T) {
	// Not parallel: it counts the bytes allocated.
	one := t.TempDir()
	writePNG(t, filepath.Join(one, "big.png"), 300<<20)
	many := t.TempDir()
	for i := range 5 {
		writePNG(t, filepath.Join(many, fmt.Sprintf("%d.png", i)), 15<<20)
	}
	for dir, want := range map[string]string{
		one:  "big.png is 300 MiB, more than the 16 MiB an image may be",
		many: "holds more than the 64 MiB of images a workload may hold",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := newImagePool(suite.Images{Dir: dir}, suite.Workload{}, 1, 0)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, inputfile.ErrTooLarge) {
			t.Errorf("%v, want %q", err, want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("refusing %s allocated %d bytes: it read the files", dir, alloc)
		}
	}
	// At the bounds: four files of 16 MiB, one at a time in a request.
	four := t.TempDir()
	for i := range 4 {
		writePNG(t, filepath.Join(four, fmt.Sprintf("%d.png", i)), MaxImageFile)
	}
	if _, err := newImagePool(suite.Images{Dir: four}, suite.Workload{}, 1, 0); err != nil {
		t.Errorf("64 MiB of images: %v", err)
	}
	// Two of them a request are more than a request may carry.
	two := suite.Dist{Kind: suite.DistFixed, Value: 2}
	if _, err := newImagePool(suite.Images{Dir: four, Count: &two}, suite.Workload{}, 1, 0); err == nil || !strings.Contains(err.Error(), "a request may carry 2 images of up to 16 MiB, more than the 16 MiB") {
		t.Errorf("two 16 MiB images a request: %v", err)
	}
}

// The images of a request are bounded however the count is drawn (F12:
// images.count fixed(1000000) passed validate and the run took 2.2 GB):
// a generator built past validation clips the count to
// suite.MaxImagesPerRequest; likewise an embeddings batch to
// suite.MaxBatch.
func TestCountsClipped(t *testing.T) {
	t.Parallel()
	million := suite.Dist{Kind: suite.DistFixed, Value: 1e6}
	w := suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 1}, OutputTokens: suite.Dist{Kind: "fixed", Value: 1},
		Images: &suite.Images{Count: &million, Sizes: []suite.ImageSize{{Width: 8, Height: 8}}}, Batch: &million}
	g, err := NewGenerator(w, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	r := g.Next()
	if len(r.Images) != suite.MaxImagesPerRequest || len(r.Inputs) != suite.MaxBatch-1 {
		t.Errorf("%d images, %d inputs; want %d and %d", len(r.Images), len(r.Inputs)+1, suite.MaxImagesPerRequest, suite.MaxBatch)
	}
	// Resolutions' weights, too, share as their ratio says.
	w.Batch = nil
	w.Images = &suite.Images{Sizes: []suite.ImageSize{{Width: 8, Height: 8, Weight: 1e308}, {Width: 4, Height: 4, Weight: 1e308}}}
	if g, err = NewGenerator(w, Sources{}); err != nil {
		t.Fatal(err)
	}
	small := 0
	for range 2000 {
		g.Next()
		if g.images.lastSz == 1 {
			small++
		}
	}
	// Binomial(2000, 1/2): sd 22; 4 sd.
	if math.Abs(float64(small)-1000) > 90 {
		t.Errorf("%d of 2000 requests had the second of two resolutions of weight 1e308", small)
	}
	w.Images.Sizes = make([]suite.ImageSize, suite.MaxImageSizes+1)
	if _, err := NewGenerator(w, Sources{}); err == nil || !strings.Contains(err.Error(), "17 resolutions") {
		t.Errorf("17 sizes: %v", err)
	}
}

// Weights that overflow when added share as their ratio says (M6: two
// weights of 1e308 sent every request to one model).
func TestModelWeightsDoNotOverflow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		weights []float64
		want    []float64
	}{
		{[]float64{1e308, 1e308}, []float64{0.5, 0.5}},
		{[]float64{1e308, 1e308, 0, 1e308}, []float64{1.0 / 3, 1.0 / 3, 0, 1.0 / 3}},
		{[]float64{math.MaxFloat64, 1e-300}, []float64{1, 0}},
		{[]float64{5e-324, 5e-324}, []float64{0.5, 0.5}},
	} {
		w := suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 1}, OutputTokens: suite.Dist{Kind: "fixed", Value: 1}, Seed: 3}
		for i, wt := range tc.weights {
			w.Models = append(w.Models, suite.ModelShare{Name: fmt.Sprint(i), Weight: wt})
		}
		g, err := NewGenerator(w, Sources{})
		if err != nil {
			t.Fatal(err)
		}
		const n = 6000
		counts := map[string]int{}
		for range n {
			counts[g.Next().Model]++
		}
		for i, want := range tc.want {
			// Binomial(6000, 1/2): sd 0.0065; 4 sd.
			if got := float64(counts[fmt.Sprint(i)]) / n; math.Abs(got-want) > 0.026 {
				t.Errorf("weights %v: model %d has %.3f of the requests, want %.3f", tc.weights, i, got, want)
			}
		}
	}
	w := suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 1}, OutputTokens: suite.Dist{Kind: "fixed", Value: 1},
		Models: []suite.ModelShare{{Name: "a", Weight: 1}, {Name: "b", Weight: math.Inf(1)}}}
	if _, err := NewGenerator(w, Sources{}); err == nil || !strings.Contains(err.Error(), "workload.models[1].weight") {
		t.Errorf("an infinite weight: %v", err)
	}
	w.Models[1].Weight = math.NaN()
	if _, err := NewGenerator(w, Sources{}); err == nil {
		t.Error("a NaN weight was taken")
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
