package metric

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
