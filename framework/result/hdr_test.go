package result

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// histograms are the layouts benchci records (latencies in microseconds
// up to an hour at 3 digits, token counts to 10M, a mix's model at 2),
// filled with the shapes results have.
func histograms(t testing.TB) map[string]*hdrhistogram.Histogram {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 42))
	out := map[string]*hdrhistogram.Histogram{}
	layouts := []struct {
		name         string
		low, high    int64
		digits       int
		median, tail float64
	}{
		{"latency", 1, 3_600_000_000, 3, 80_000, 1.2},
		{"tokens", 1, 10_000_000, 3, 300, 0.8},
		{"mix", 1, 3_600_000_000, 2, 2_000, 2},
	}
	for _, l := range layouts {
		for _, n := range []int{0, 1, 2, 17, 1000, 20000} {
			h := hdrhistogram.New(l.low, l.high, l.digits)
			for range n {
				v := int64(l.median * math.Exp(l.tail*rng.NormFloat64()))
				if err := h.RecordValue(min(max(v, 0), l.high)); err != nil {
					t.Fatal(err)
				}
			}
			out[l.name+"/"+strconv.Itoa(n)] = h
		}
		h := hdrhistogram.New(l.low, l.high, l.digits)
		if err := h.RecordValues(0, 5); err != nil { // zeros: Min skips nothing
			t.Fatal(err)
		}
		if err := h.RecordValues(l.high, 1<<40); err != nil { // a top bucket, counts past 32 bits
			t.Fatal(err)
		}
		out[l.name+"/edges"] = h
	}
	return out
}

func TestSummarizeIsTheLibrarys(t *testing.T) {
	for name, h := range histograms(t) {
		for _, scale := range []float64{1, 1000} {
			if got, want := Summarize(h, scale), librarySummarize(h, scale); got != want {
				t.Errorf("%s at scale %v:\n got %+v\nwant %+v", name, scale, got, want)
			}
		}
	}
}

// encodedAsTheLibrary encodes h and fails t unless the bytes are the
// library's own.
func encodedAsTheLibrary(t testing.TB, name string, h *hdrhistogram.Histogram) string {
	t.Helper()
	got, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	want, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: encoded differently from the library:\n got %.80s…\nwant %.80s…", name, got, want)
	}
	return got
}

func TestEncodeIsTheLibrarys(t *testing.T) {
	for name, h := range histograms(t) {
		got := encodedAsTheLibrary(t, name, h)
		back, err := DecodeHistogram(got)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !back.Equals(h) {
			t.Errorf("%s: does not decode to itself", name)
		}
	}
}

// FuzzHistogramFastPaths records values the fuzzer chooses and holds
// Summarize and EncodeHistogram to the library's figures and bytes.
func FuzzHistogramFastPaths(f *testing.F) {
	f.Add([]byte{1, 2, 3, 250, 0, 0, 0, 9}, uint8(3))
	f.Add([]byte{}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, digits uint8) {
		h := hdrhistogram.New(1, 3_600_000_000, int(digits%3)+1)
		for len(data) >= 5 {
			v := int64(binary.LittleEndian.Uint32(data)) % 3_600_000_001
			n := int64(data[4]) + 1
			data = data[5:]
			if err := h.RecordValues(v, n); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := Summarize(h, 1000), librarySummarize(h, 1000); got != want {
			t.Fatalf("summary\n got %+v\nwant %+v", got, want)
		}
		encodedAsTheLibrary(t, "fuzzed", h)
	})
}

// BenchmarkSummarize and BenchmarkEncode compare the one-walk summary
// and the kept zlib writer with the library's calls, side by side.
func BenchmarkSummarize(b *testing.B) {
	h := histograms(b)["latency/20000"]
	b.Run("one-walk", func(b *testing.B) {
		for b.Loop() {
			Summarize(h, 1000)
		}
	})
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			librarySummarize(h, 1000)
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	h := histograms(b)["latency/20000"]
	b.Run("kept-writer", func(b *testing.B) {
		for b.Loop() {
			if _, err := EncodeHistogram(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Layouts past the few whose bounds are kept are summarized by the
// library's calls, to the same figures.
func TestSummarizePastTheKeptLayouts(t *testing.T) {
	for i := range 12 {
		h := hdrhistogram.New(1, int64(1000<<i), 1+i%3)
		for v := int64(1); v < int64(1000<<i); v = v*3 + 1 {
			if err := h.RecordValues(v, v%7+1); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := Summarize(h, 1), librarySummarize(h, 1); got != want {
			t.Errorf("layout %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// Snapshots the library imports but benchci never writes (no significant
// digits; counts whose total wraps) are summarized and encoded by the
// library's own calls, to its figures and bytes.
func TestOddSnapshotsAreTheLibrarys(t *testing.T) {
	zeroDigits := hdrhistogram.New(1, 1_000_000, 1).Export()
	zeroDigits.SignificantFigures = 0
	zeroDigits.Counts = make([]int64, 64)
	zeroDigits.Counts[5], zeroDigits.Counts[40] = 3, 2
	wrapped := hdrhistogram.New(1, 1_000_000, 2).Export()
	wrapped.Counts[10], wrapped.Counts[300] = math.MaxInt64, 5
	for name, snap := range map[string]*hdrhistogram.Snapshot{"zero digits": zeroDigits, "wrapped total": wrapped} {
		h := hdrhistogram.Import(snap)
		if h == nil {
			t.Logf("%s: the library does not import it", name)
			continue
		}
		if got, want := Summarize(h, 1), librarySummarize(h, 1); got != want && h.TotalCount() != 0 {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
		got, err := EncodeHistogram(h)
		want, werr := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if (err == nil) != (werr == nil) || err == nil && got != string(want) {
			t.Errorf("%s: encoded differently from the library (%v, %v)", name, err, werr)
		}
	}
}
