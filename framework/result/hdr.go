package result

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Summarize describes h, whose values are divided by scale (1000 turns
// recorded microseconds into milliseconds, 1 leaves counts as they are).
//
// The figures are HdrHistogram's own Min, Mean, StdDev, ValueAtQuantile
// and Max, bit for bit (TestSummarizeIsTheLibrarys), read in one walk of
// the counts: the library walks its buckets once per figure, and results
// are summarized when recorded, verified when read and again when a
// history is cut.
func Summarize(h *hdrhistogram.Histogram, scale float64) Summary {
	total := h.TotalCount()
	if total == 0 {
		return Summary{}
	}
	snap := h.Export()
	b := boundsOf(snap)
	if b == nil || !sumsTo(snap.Counts, total) {
		// A layout past the kept ones, or counts whose total wrapped (an
		// imported snapshot): the library's own walk, whatever it says.
		return librarySummarize(h, scale)
	}
	ranks := [...]float64{50, 90, 95, 99, 99.9}
	var at [len(ranks)]int64
	for i, p := range ranks {
		at[i] = percentileRank(p, total)
	}
	var q [len(ranks)]int64
	var mean float64
	var seen int64
	first, last, next := -1, -1, 0
	// The library's walk stops at the bucket whose counts reach the total.
	for i := 0; i < len(snap.Counts) && seen < total; i++ {
		c := snap.Counts[i]
		if c == 0 {
			continue
		}
		if i >= len(b.from) {
			return librarySummarize(h, scale) // counts past the layout's top: a forged histogram
		}
		if first < 0 {
			first = i
		}
		last = i
		mean += float64(c) * float64(b.median(i)) / float64(total)
		seen += c
		for ; next < len(at) && seen >= at[next]; next++ {
			q[next] = b.to[i]
		}
	}
	var dev float64
	for i := first; i <= last; i++ {
		if c := snap.Counts[i]; c != 0 {
			d := float64(b.median(i)) - mean
			dev += (d * d) * float64(c) / float64(total)
		}
	}
	v := func(x int64) float64 { return float64(x) / scale }
	return Summary{Count: total, Min: v(b.from[first]), Mean: mean / scale, Stddev: math.Sqrt(dev) / scale,
		P50: v(q[0]), P90: v(q[1]), P95: v(q[2]), P99: v(q[3]), P999: v(q[4]), Max: v(b.to[last])}
}

// sumsTo reports whether counts add up to total without overflowing.
func sumsTo(counts []int64, total int64) bool {
	var sum int64
	for _, c := range counts {
		if c < 0 || c > math.MaxInt64-sum {
			return false
		}
		sum += c
	}
	return sum == total
}

// librarySummarize is Summarize by the library's calls, for a histogram
// whose layout has no bounds kept.
func librarySummarize(h *hdrhistogram.Histogram, scale float64) Summary {
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / scale }
	return Summary{Count: h.TotalCount(), Min: float64(h.Min()) / scale, Mean: h.Mean() / scale, Stddev: h.StdDev() / scale,
		P50: q(50), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9), Max: float64(h.Max()) / scale}
}

// bounds are a layout's buckets, by index into its counts: the lowest
// and highest value each stands for, as the library's Distribution gives
// them (so no bucket arithmetic is copied here).
type bounds struct{ from, to []int64 }

// median is the value HdrHistogram stands bucket i's counts by.
func (b *bounds) median(i int) int64 { return b.from[i] + (b.to[i]-b.from[i]+1)>>1 }

var (
	boundsMu sync.Mutex
	// layouts are the bounds of the layouts seen; benchci records three,
	// and a reader refuses others, so a few are kept and no more.
	layouts = map[[3]int64]*bounds{}
)

// boundsOf returns the bounds of snap's layout; nil for a layout past the
// few kept.
func boundsOf(snap *hdrhistogram.Snapshot) *bounds {
	key := [3]int64{snap.LowestTrackableValue, snap.HighestTrackableValue, snap.SignificantFigures}
	if key[2] < 1 || key[2] > 5 {
		return nil // New clamps these, so its buckets would not be snap's
	}
	boundsMu.Lock()
	defer boundsMu.Unlock()
	if b, ok := layouts[key]; ok {
		return b
	}
	if len(layouts) >= 8 {
		return nil
	}
	h := hdrhistogram.New(key[0], key[1], int(key[2]))
	if err := h.RecordValue(key[1]); err != nil {
		return nil
	}
	bars := h.Distribution() // every bucket up to the top one
	b := &bounds{from: make([]int64, len(bars)), to: make([]int64, len(bars))}
	for i, bar := range bars {
		b.from[i], b.to[i] = bar.From, bar.To
	}
	layouts[key] = b
	return b
}

// percentileRank is HdrHistogram's rank of a percentile: the count a
// walk of the buckets must reach.
func percentileRank(p float64, total int64) int64 {
	rank := (p/100)*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// EncodeHistogram returns h in HdrHistogram's compressed V2 form, base64,
// readable by every HdrHistogram implementation.
//
// It writes the bytes the library's Encode writes (TestEncodeIsTheLibrarys)
// with a zlib writer kept for the next call: the library makes a new one
// per histogram, whose best-compression state (about a megabyte, zeroed)
// was most of the cost of writing a result.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	snap := h.Export()
	if !sumsTo(snap.Counts, h.TotalCount()) {
		// An imported snapshot whose total wrapped: the library's bytes.
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return "", fmt.Errorf("encode histogram: %w", err)
		}
		return string(b), nil
	}
	limit := 1 // the library writes the first bucket of an empty histogram
	for i := len(snap.Counts) - 1; i >= 0; i-- {
		if snap.Counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	var counts []byte
	for i := 0; i < limit; {
		c := snap.Counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && snap.Counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		counts = appendZigZag(counts, c)
	}
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	var raw bytes.Buffer
	raw.Grow(40 + len(counts))
	for _, v := range []any{v2Cookie, int32(len(counts)), int32(0), int32(snap.SignificantFigures),
		snap.LowestTrackableValue, snap.HighestTrackableValue, ratio} {
		if err := binary.Write(&raw, binary.BigEndian, v); err != nil {
			return "", fmt.Errorf("encode histogram: %w", err)
		}
	}
	raw.Write(counts)

	var packed bytes.Buffer
	z := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(z)
	z.Reset(&packed)
	if _, err := z.Write(raw.Bytes()); err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	if err := z.Close(); err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	out := make([]byte, 8, 8+packed.Len())
	binary.BigEndian.PutUint32(out, uint32(v2CompressedCookie))
	binary.BigEndian.PutUint32(out[4:], uint32(packed.Len()))
	out = append(out, packed.Bytes()...)
	return base64.StdEncoding.EncodeToString(out), nil
}

// The V2 cookies, with the word size HdrHistogram writes in their low bits.
const (
	v2Cookie           = hdrhistogram.V2EncodingCookieBase | 0x10
	v2CompressedCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

var zlibWriters = sync.Pool{New: func() any {
	z, err := zlib.NewWriterLevel(nil, zlib.BestCompression)
	if err != nil {
		panic(err) // BestCompression is a valid level
	}
	return z
}}

// appendZigZag appends v as HdrHistogram's ZigZag LEB128-64b9B: seven
// bits a byte for eight bytes, and all eight of the ninth.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>(7*(i+1)) == 0 {
			return append(b, byte(u>>(7*i)))
		}
		b = append(b, byte(u>>(7*i))|0x80)
	}
	return append(b, byte(u>>56))
}
