package suite

import (
	"math"
	"testing"
	"time"
)

func TestParseBand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Band
		wantErr bool
	}{
		{"10%", Band{Rel: 0.1}, false},
		{"20ms", Band{Abs: 20 * time.Millisecond}, false},
		{"5% | 1ms", Band{Rel: 0.05, Abs: time.Millisecond}, false},
		{"0%", Band{}, false},
		{"", Band{}, true},
		{"-3%", Band{}, true},
		{"ten", Band{}, true},
		{"10", Band{}, true},
	}
	for _, tt := range tests {
		got, err := ParseBand(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseBand(%q) = %+v, %v; want %+v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// FuzzDecode feeds arbitrary JSON to the decoder: it must return a suite or
// an error, never panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name":"x","target":{"kind":"sim","profile":"tiny"},"workload":{"input_tokens":{"kind":"fixed","value":1},"output_tokens":{"kind":"fixed","value":1}},"sweep":{"rates":[1]}}`))
	f.Add([]byte(`{"sweep":{"rates":[1,"x",null,{}]},"slos":[{"metric":"ttft","threshold":[]}],"tolerance":{"a":1}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"trials":1e300,"request":{"timeout":"-1s","extra":{"a":[1,{"b":2}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if (s == nil) == (err == nil) {
			t.Fatalf("Decode returned suite %v and error %v", s, err)
		}
	})
}

// FuzzParseBand: no panic, and an accepted band is finite and not negative.
func FuzzParseBand(f *testing.F) {
	for _, s := range []string{"10%", "20ms", "10%|20ms", "", "|", "-1%", "1e400%", "NaN%", "5%|5%|1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBand(s)
		if err != nil {
			return
		}
		if !(b.Rel >= 0) || math.IsInf(b.Rel, 0) || b.Abs < 0 {
			t.Fatalf("ParseBand(%q) = %+v", s, b)
		}
	})
}
