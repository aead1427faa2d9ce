package redact

import (
	"strings"
	"testing"
)

// BenchmarkString masks the texts every error body and log line goes
// through, with a few secrets registered: plain text (the common case),
// text holding JSON escapes (decoded before searching) and one holding a
// secret.
func BenchmarkString(b *testing.B) {
	Add("bench-key-0123456789abcdef", "hf_benchTokenZYXWVUTSRQ", "ghs_benchGitHubToken0000")
	plain := strings.Repeat("2026-12-05T17:20:23Z INFO request served in 12.3 ms, 128 tokens, status 200 OK\n", 12)
	escaped := strings.Repeat(`{"error":{"message":"model \"llama\/3\" not found","type":"invalid_request_error","code":404}}`+"\n", 10)
	withSecret := plain + "401: invalid key bench-key-0123456789abcdef\n"
	for _, bc := range []struct{ name, in string }{
		{"plain", plain},
		{"escaped", escaped},
		{"secret", withSecret},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				String(bc.in)
			}
		})
	}
}
