package netstamp

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseStamp(t *testing.T) {
	ts := make([]byte, 16)
	binary.NativeEndian.PutUint64(ts, 1700000000)
	binary.NativeEndian.PutUint64(ts[8:], 123456789)
	want := int64(1700000000)*1e9 + 123456789
	other := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, []byte{1, 2, 3, 4})
	tests := []struct {
		name string
		oob  []byte
		ok   bool
	}{
		{"alone", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts), true},
		{"after another message", append(other, cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)...), true},
		{"other level", cmsg(unix.IPPROTO_TCP, unix.SCM_TIMESTAMPNS, ts), false},
		{"truncated", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)[:24], false},
		{"short data", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts[:8]), false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		got, ok := parseStamp(tt.oob)
		if ok != tt.ok || (ok && got != want) {
			t.Errorf("%s: got %d, %v; want %d, %v", tt.name, got, ok, want, tt.ok)
		}
	}
}

func FuzzParseStamp(f *testing.F) {
	ts := make([]byte, 16)
	f.Add(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts))
	f.Add(append(cmsg(0, 0, []byte{1}), cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)...))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 1, 0, 0, 0, 35, 0, 0, 0})
	f.Fuzz(func(t *testing.T, oob []byte) {
		parseStamp(oob) // must not panic or loop
	})
}
