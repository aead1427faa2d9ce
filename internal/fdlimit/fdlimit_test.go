package fdlimit

import "testing"

func TestForLimit(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{
		{0, 0},      // unknown: no cap
		{1024, 768}, // a common default soft limit
		{100, 16},   // tiny: still some load
		{1 << 20, 1<<20 - Reserve},
	} {
		if got := ForLimit(tc.limit); got != tc.want {
			t.Errorf("ForLimit(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
	if conns, limit := MaxConns(); limit > 0 && conns != ForLimit(limit) {
		t.Errorf("MaxConns = %d for limit %d", conns, limit)
	}
}
