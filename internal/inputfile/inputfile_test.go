package inputfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "x.shard-0-of-2.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		max  int64
		want error
	}{
		{"over the limit", small, 9, ErrTooLarge},
		{"a fifo does not block", fifo, 1 << 20, ErrNotRegular},
		{"a device", "/dev/zero", 1 << 20, ErrNotRegular},
		{"a directory", dir, 1 << 20, ErrNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFile(tc.path, tc.max)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ReadFile(%s) = %v, want %v", tc.path, err, tc.want)
			}
		})
	}
	b, err := ReadFile(small, 10)
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("ReadFile at the limit = %q, %v", b, err)
	}
}

func TestReadStopsAFileThatGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grows")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(path, []byte("123456789012"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	var readErr error
	for readErr == nil {
		_, readErr = f.Read(buf)
	}
	if !errors.Is(readErr, ErrTooLarge) {
		t.Fatalf("reading a file grown past the limit: %v, want ErrTooLarge", readErr)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{12: "12 B", 300 << 10: "300 KiB", 64 << 20: "64 MiB", 1 << 30: "1 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimitReader(t *testing.T) {
	over := errors.New("over")
	for _, tc := range []struct {
		in      string
		max     int64
		want    string
		wantErr error
	}{
		{"12345", 5, "12345", nil},
		{"123456", 5, "12345", over},
		{"", 0, "", nil},
	} {
		got, err := io.ReadAll(LimitReader(strings.NewReader(tc.in), tc.max, over))
		if string(got) != tc.want || err != tc.wantErr {
			t.Errorf("LimitReader(%q, %d) read %q, %v; want %q, %v", tc.in, tc.max, got, err, tc.want, tc.wantErr)
		}
	}
}
