package client

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, src string, bufSize, maxLine int) ([]string, error) {
	t.Helper()
	r := NewEventReader(bufio.NewReaderSize(strings.NewReader(src), bufSize), maxLine)
	var got []string
	for {
		d, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return got, nil
			}
			return got, err
		}
		got = append(got, string(d))
	}
}

func TestEventReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr error
	}{
		{"plain", "data: a\n\ndata: b\n\n", []string{"a", "b"}, nil},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}, nil},
		{"cr only", "data: a\r\rdata: b\rdata: c\r\r", []string{"a", "b\nc"}, nil},
		{"cr and lf across a buffer edge", "data: 0123456\r\n\r\ndata: b\r\r", []string{"0123456", "b"}, nil},
		{"no space after colon", "data:a\n\n", []string{"a"}, nil},
		{"keep-alive comments", ": ping\n\ndata: a\n\n: ping\n\n", []string{"a"}, nil},
		{"event and id fields ignored", "event: message\nid: 7\nretry: 10\ndata: a\n\n", []string{"a"}, nil},
		{"multi-line data joined", "data: a\ndata: b\n\n", []string{"a\nb"}, nil},
		{"missing final blank line", "data: a\n\ndata: [DONE]\n", []string{"a", "[DONE]"}, nil},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\n", []string{"a"}, nil},
		{"empty data", "data:\n\n", []string{""}, nil},
		{"cut mid-line", "data: a\n\ndata: {\"x", []string{"a"}, io.ErrUnexpectedEOF},
		{"line over the limit", "data: " + strings.Repeat("x", 100) + "\n\n", nil, ErrLineTooLong},
		{"long line within limit spans buffers", "data: " + strings.Repeat("y", 60) + "\n\n", []string{strings.Repeat("y", 60)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := readAll(t, tt.in, 16, 80)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("events %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzEventReader checks the reader against a simple reference parser of the
// same rules, and that it never returns more than the line limit.
func FuzzEventReader(f *testing.F) {
	f.Add("data: a\n\ndata: b\r\n\r\n", 16)
	f.Add(": c\nevent: x\ndata: 1\ndata: 2\n\n", 64)
	f.Add("data: [DONE]", 4096)
	f.Add("\r\n\r\ndata\n\n", 16)
	f.Add("data: a\r\rdata: b\r\n\r\n", 16)
	f.Fuzz(func(t *testing.T, in string, bufSize int) {
		bufSize = 16 + (bufSize&0xffff)%4096
		const maxLine = 256
		got, err := readAll(t, in, bufSize, maxLine)
		for _, e := range got {
			if len(e) > len(in) {
				t.Fatalf("event longer than the input: %q", e)
			}
		}
		want, wantErr := reference(in, maxLine)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("error %v, reference %v", err, wantErr)
		}
		if err == nil && strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("events %q, reference %q", got, want)
		}
	})
}

// reference parses by splitting the whole input into lines at \r\n, \r
// or \n, as the SSE specification says.
func reference(in string, maxLine int) ([]string, error) {
	var out []string
	var data []string
	has := false
	rest := in
	for rest != "" {
		i := strings.IndexAny(rest, "\r\n")
		if i < 0 {
			if len(rest) > maxLine {
				return out, ErrLineTooLong
			}
			return out, io.ErrUnexpectedEOF
		}
		line := rest[:i]
		if strings.HasPrefix(rest[i:], "\r\n") {
			rest = rest[i+2:]
		} else {
			rest = rest[i+1:]
		}
		if len(line) > maxLine {
			return out, ErrLineTooLong
		}
		switch {
		case line == "":
			if has {
				out = append(out, strings.Join(data, "\n"))
				data, has = nil, false
			}
		case line[0] == ':':
		default:
			name, value, found := strings.Cut(line, ":")
			if found && strings.HasPrefix(value, " ") {
				value = value[1:]
			}
			if name == "data" {
				data = append(data, value)
				has = true
			}
		}
	}
	if has {
		out = append(out, strings.Join(data, "\n"))
	}
	return out, nil
}

// BenchmarkEventReader reads a typical chat stream: 1000 chunk events.
func BenchmarkEventReader(b *testing.B) {
	var sb strings.Builder
	for range 1000 {
		sb.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}` + "\n\n")
	}
	src := sb.String()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewEventReader(bufio.NewReaderSize(strings.NewReader(src), 2<<10), 1<<20)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

// FuzzParseEmbeddings: no answer body makes the embeddings parser panic,
// and it never counts a negative number of anything.
func FuzzParseEmbeddings(f *testing.F) {
	f.Add([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":5,"total_tokens":5}}`))
	f.Add([]byte(`{"error":{"message":"bad"}}`))
	f.Add([]byte(`{"data":null,"usage":{"prompt_tokens":-3}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, prompt, _, err := parseEmbeddings(data)
		if err == nil && (n < 0 || prompt < 0) {
			t.Errorf("n %d, prompt %d", n, prompt)
		}
	})
}
