package result

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/benchci/benchci/internal/redact"
)

// ErrUnverifiable marks a stored suite definition that cannot be checked
// against its hash: the file has no hash, or a secret in the definition
// was masked when the file was written (the hash covers the secret).
var ErrUnverifiable = errors.New("the stored suite definition cannot be checked against a hash")

// HasDefinition reports whether the file recorded its suite's
// definition: one written through this package without it stores null.
func (s Suite) HasDefinition() bool {
	d := bytes.TrimSpace(s.Definition)
	return len(d) > 0 && !bytes.Equal(d, []byte("null"))
}

// CheckHash checks that the stored definition is the one suite.hash was
// made of: the runner hashes the compact JSON it stores (suitefile: the
// evaluated suite; a variant: its json.Marshal), so an edit of the
// definition after the run (a tolerance loosened, SLOs dropped) changes
// its hash. It returns ErrUnverifiable when there is nothing to check.
//
// Every format version hashed the same way; what differs is how the
// definition was re-encoded on its way into the file: results files are
// written by json.MarshalIndent, which escapes <, > and & (and U+2028,
// U+2029) inside the raw definition, and baselines are written without
// that escaping. json.Compact keeps escapes as they are, so the hash is
// tried on the compact definition as stored and with those escapes undone.
// (A v1 file's definition is checked as it was written, before
// migration re-encodes it: see Parse.)
func (s Suite) CheckHash() error {
	if !s.HasDefinition() || s.Hash == "" {
		return ErrUnverifiable
	}
	def := bytes.TrimSpace(s.Definition)
	var c bytes.Buffer
	if err := json.Compact(&c, def); err != nil {
		return fmt.Errorf("suite definition: %w", err)
	}
	if bytes.Contains(c.Bytes(), []byte(redact.Mask)) {
		return ErrUnverifiable
	}
	sum := sha256.Sum256(c.Bytes())
	got := hex.EncodeToString(sum[:])
	if got == s.Hash {
		return nil
	}
	if un := unescapeHTML(c.Bytes()); !bytes.Equal(un, c.Bytes()) {
		sum := sha256.Sum256(un)
		if hex.EncodeToString(sum[:]) == s.Hash {
			return nil
		}
	}
	// A file rewritten by a JSON tool (jq, a script) keeps the values but
	// not their spelling: 2.4900000000000002 becomes 2.49. The suite's
	// own definition is Jsonnet's output, which can be spelled again.
	if j, ok := jsonnetForm(def); ok {
		sum := sha256.Sum256(j)
		if hex.EncodeToString(sum[:]) == s.Hash {
			return nil
		}
	}
	return fmt.Errorf("its stored suite definition no longer hashes to its suite.hash (edited after it was measured): suite.hash %.12s, the definition's %.12s: %w", s.Hash, got, ErrInconsistent)
}

// jsonnetForm spells def as go-jsonnet's manifestation does, compact:
// keys sorted, integers as %.0f and other numbers as %.17g, strings
// escaped as its unparseString escapes them.
func jsonnetForm(def []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(def))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	var b bytes.Buffer
	if !writeJsonnet(&b, v) {
		return nil, false
	}
	return b.Bytes(), true
}

func writeJsonnet(b *bytes.Buffer, v any) bool {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || !finite(f) {
			return false
		}
		if f == math.Floor(f) {
			fmt.Fprintf(b, "%.0f", f)
		} else {
			fmt.Fprintf(b, "%.17g", f)
		}
	case string:
		b.WriteByte('"')
		for _, c := range v {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if c < 0x20 || (c >= 0x7f && c <= 0x9f) {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteRune(c)
				}
			}
		}
		b.WriteByte('"')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if !writeJsonnet(b, x) {
				return false
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJsonnet(b, k)
			b.WriteByte(':')
			if !writeJsonnet(b, v[k]) {
				return false
			}
		}
		b.WriteByte('}')
	default:
		return false
	}
	return true
}

// unescapeHTML undoes encoding/json's HTML escaping of compact JSON. Only
// strings hold backslashes there, and every escape is stepped over whole,
// so an escaped backslash followed by "u003c" is left alone.
func unescapeHTML(b []byte) []byte {
	escaped := map[string]string{`\u003c`: "<", `\u003e`: ">", `\u0026`: "&", `\u2028`: "\u2028", `\u2029`: "\u2029"}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			i++
			continue
		}
		if i+6 <= len(b) {
			if r, ok := escaped[string(b[i:i+6])]; ok {
				out = append(out, r...)
				i += 6
				continue
			}
		}
		out = append(out, b[i], b[i+1])
		i += 2
	}
	return out
}

// QuietTailShare is how much of a window may pass after the point's
// last recorded event (the end of its slices) before the window is taken
// for longer than the point ran. An open-loop window has a fixed end, and
// its arrivals may stop short of it: with Poisson arrivals, a quarter of
// the window without one has a chance of e^(-n/4) for n requests sent,
// under 1e-4 from 40 requests; fewer are allowed ten mean gaps, e^-10.
// A closed-loop window always ends with requests in flight, so its
// slices bound it without slack.
const QuietTailShare = 0.25

// windowFromSlices checks the window against the slices beside it: the
// slices are cut from the point's start by the recorder as each request
// is sent, streams and ends, so the last slice holds the point's last
// event, and the window (which starts window_start_s into the point)
// cannot end much after it. A window stretched by hand, its throughputs
// and costs scaled to match, still ends where no request ran.
//
// Left unchecked: points without slices (files before them), points
// stopped part-way (their planned window outlasts what ran), slices that
// hit the recorder's bound (the last folds in all later ones), and
// arrivals whose quiet stretches are the workload's own (quiet false).
func (m *Measured) windowFromSlices(incomplete, quiet, closed bool) error {
	sl := m.Slices
	if sl == nil || incomplete || len(sl.Slices) == 0 || len(sl.Slices) >= maxSlices {
		return nil
	}
	if !finite(sl.WidthS) || sl.WidthS <= 0 || !finite(sl.WindowStartS) || sl.WindowStartS < 0 {
		return fmt.Errorf("slices of %v s from %v s: %w", sl.WidthS, sl.WindowStartS, ErrInconsistent)
	}
	if quiet {
		return nil
	}
	ran := float64(len(sl.Slices)) * sl.WidthS
	secs := m.Window.Seconds
	// The slices and the window are cut from one start (the point's and
	// its warm-up's end), and every request's end falls in a slice, so
	// the last slice ends after the last event: a window that ends at the
	// last answer, or (closed loop) with requests in flight, ends inside
	// the slices. Only an open-loop window's quiet tail is allowed beyond.
	slack := 1e-6
	if !closed {
		slack += max(QuietTailShare*secs, 10*secs/float64(m.Requests.Sent+1))
	}
	if end := sl.WindowStartS + secs; end > (ran+slack)*(1+1e-9) {
		return fmt.Errorf("a window of %.4g s ends %.4g s into the point, but its %d slices of %.4g s show requests only until %.4g s: the window is longer than the point ran: %w",
			secs, end, len(sl.Slices), sl.WidthS, ran, ErrInconsistent)
	}
	return nil
}

// maxSlices is the recorder's bound on a point's slices (twice
// recorder.MaxSlices): at it, the last slice holds every later event.
const maxSlices = 240

// quietArrivals says whether the suite's arrivals may leave a stretch of
// a window without requests as a matter of course: trace replay, gamma
// arrivals burstier than Poisson, and sessions that think between turns.
// A definition that cannot be read counts as quiet (nothing refused).
func (s Suite) quietArrivals() bool {
	if len(s.Definition) == 0 {
		return false
	}
	var d struct {
		Workload struct {
			Arrival struct {
				Kind       string   `json:"kind"`
				Burstiness *float64 `json:"burstiness"`
			} `json:"arrival"`
			Prompts struct {
				ThinkTime json.RawMessage `json:"think_time"`
			} `json:"prompts"`
		} `json:"workload"`
	}
	if json.Unmarshal(s.Definition, &d) != nil {
		return true
	}
	a := d.Workload.Arrival
	switch {
	case a.Kind == "trace":
		return true
	case a.Kind == "gamma" && (a.Burstiness == nil || math.IsNaN(*a.Burstiness) || *a.Burstiness < 1):
		return true
	}
	t := string(bytes.TrimSpace(d.Workload.Prompts.ThinkTime))
	return t != "" && t != "null" && t != `""` && t != "0" && t != `"0s"`
}
