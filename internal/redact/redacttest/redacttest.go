// Package redacttest checks texts for a secret in any form a server may
// echo it in: tests' side of package redact, written apart from it so
// that a check does not share the code it checks.
package redacttest

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"regexp"
	"strconv"
	"strings"
)

// Leak reports the first form of secret found in out, or "" when none:
// as written; spaced out (when spaced is set: out and secret compared
// with every character but ASCII letters and digits taken away); or
// decoded from any base64 token (either alphabet, every character offset)
// or hex token (both nibble offsets) out holds. Each is also looked for
// in out with its JSON, HTML and percent escapes decoded.
func Leak(out, secret string, spaced bool) string {
	if how := leak(out, secret, spaced); how != "" {
		return how
	}
	if u := unescape(out); u != out {
		if how := leak(u, secret, spaced); how != "" {
			return how + ", unescaped"
		}
	}
	return ""
}

var (
	jsonEscape    = regexp.MustCompile(`\\u[0-9a-fA-F]{4}|\\/`)
	percentEscape = regexp.MustCompile(`%[0-9a-fA-F]{2}`)
)

func unescape(s string) string {
	s = jsonEscape.ReplaceAllStringFunc(s, func(e string) string {
		if e == `\/` {
			return "/"
		}
		r, _ := strconv.ParseUint(e[2:], 16, 32)
		return string(rune(r))
	})
	s = html.UnescapeString(s)
	return percentEscape.ReplaceAllStringFunc(s, func(e string) string {
		b, _ := strconv.ParseUint(e[1:], 16, 8)
		return string([]byte{byte(b)})
	})
}

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

var encodings = []struct {
	name   string
	alpha  string
	decode func(string) ([]byte, error)
	group  int // characters per whole number of bytes
}{
	{"base64", letters + "+/", base64.RawStdEncoding.DecodeString, 4},
	{"base64url", letters + "-_", base64.RawURLEncoding.DecodeString, 4},
	{"hex", "0123456789abcdefABCDEF", hex.DecodeString, 2},
}

func leak(out, secret string, spaced bool) string {
	if strings.Contains(out, secret) {
		return "as written"
	}
	if spaced && strings.Contains(alnumOnly(out), alnumOnly(secret)) {
		return "spaced out"
	}
	for _, e := range encodings {
		for _, tok := range tokens(out, e.alpha) {
			for off := 0; off < e.group && off < len(tok); off++ {
				t := tok[off:]
				if len(t)%e.group == 1 { // a lone character holds no byte
					t = t[:len(t)-1]
				}
				if b, err := e.decode(t); err == nil && strings.Contains(string(b), secret) {
					return e.name + " " + tok
				}
			}
		}
	}
	return ""
}

func alnumOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && strings.ContainsRune(letters, r) {
			return r
		}
		return -1
	}, s)
}

// tokens returns out's longest runs of alpha's characters.
func tokens(out, alpha string) []string {
	var toks []string
	for i := 0; i < len(out); {
		if strings.IndexByte(alpha, out[i]) < 0 {
			i++
			continue
		}
		j := i
		for j < len(out) && strings.IndexByte(alpha, out[j]) >= 0 {
			j++
		}
		toks = append(toks, out[i:j])
		i = j
	}
	return toks
}
