package redact

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// A server can also echo a secret in an encoding of its own: an
// Authorization header quoted back (Basic base64 of user:password), a key
// base64-encoded inside a longer token, URL-safe base64, hex, or spelt out
// with a separator between its characters ("s k - a b c"). Those are not
// escapes that decode in place, so each secret's encoded forms are
// computed when it is registered and searched as they are.
//
// A secret shorter than encMinLen bytes is matched literally (and through
// escapes) only: its encodings are a handful of characters that ordinary
// base64 and hex (hashes, ids) hold by chance.
const encMinLen = 8

// maxSep is the longest separator between a spaced-out secret's
// characters: one byte (" ", "-", "."), or a few (", ", a UTF-8 no-break
// space).
const maxSep = 3

// A needle is an encoded form of a secret; a match is masked with the
// whole token around it, whose other characters hold the secret's
// neighbours (or the rest of a base64 group) and would give its edges
// away.
type needle struct {
	s     string
	alpha *[256]bool
	pad   bool // '=' padding may end the token
}

var (
	needles []needle
	spaced  []string // secrets searched spaced out

	base64Alpha = alphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
	hexAlpha    = alphabet("0123456789abcdefABCDEF")
)

func alphabet(chars string) *[256]bool {
	var a [256]bool
	for i := range len(chars) {
		a[chars[i]] = true
	}
	return &a
}

// addForms registers v's encoded forms. Call it with mu held.
func addForms(v string) {
	if len(v) < encMinLen {
		return
	}
	// Base64 encodes 3 bytes as 4 characters, so a secret inside a longer
	// text encodes one of three ways, by its offset in its 3-byte group.
	// Each way's stable part is the characters whose 6 bits are all the
	// secret's: those covering a neighbouring byte change with it.
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for off := range 3 {
			full := enc.EncodeToString(append(make([]byte, off), v...))
			first, end := (8*off+5)/6, 8*(off+len(v))/6
			addNeedle(needle{full[first:end], base64Alpha, true})
		}
	}
	h := hex.EncodeToString([]byte(v))
	addNeedle(needle{h, hexAlpha, false})
	addNeedle(needle{strings.ToUpper(h), hexAlpha, false})
	for _, s := range spaced {
		if s == v {
			return
		}
	}
	spaced = append(spaced, v)
}

func addNeedle(n needle) {
	for _, k := range needles {
		if k.s == n.s {
			return
		}
	}
	needles = append(needles, n)
}

// findForms calls found with the bounds of every encoded or spaced-out
// secret in text, token included. Call it with mu held.
func findForms(text string, found func(from, to int)) {
	for _, n := range needles {
		for at := 0; ; {
			i := strings.Index(text[at:], n.s)
			if i < 0 {
				break
			}
			i += at
			from, to := extend(text, i, i+len(n.s), n)
			found(from, to)
			at = to
		}
	}
	for _, sec := range spaced {
		findSpaced(text, sec, found)
	}
}

// extend widens text[from:to] to the whole token of n's alphabet holding
// it, with its padding.
func extend(text string, from, to int, n needle) (int, int) {
	for from > 0 && n.alpha[text[from-1]] {
		from--
	}
	for to < len(text) && n.alpha[text[to]] {
		to++
	}
	for k := 0; n.pad && k < 2 && to < len(text) && text[to] == '='; k++ {
		to++
	}
	return from, to
}

// findSpaced finds sec spelt out with one separator, repeated, between
// its characters: "s k - a b c", "s.k.-.a.b.c", "s, k, -, a, b, c". The
// separator holds no letter or digit, so no word is read as one.
func findSpaced(text, sec string, found func(from, to int)) {
	for at := 0; at < len(text); {
		i := strings.IndexByte(text[at:], sec[0])
		if i < 0 {
			return
		}
		i += at
		at = i + 1
		for l := 1; l <= maxSep && i+1+l < len(text) && !alnum(text[i+l]); l++ {
			if text[i+1+l] != sec[1] {
				continue
			}
			if end, ok := spacedAt(text, i, sec, text[i+1:i+1+l]); ok {
				found(i, end)
				at = end
				break
			}
		}
	}
}

// spacedAt reports whether sec, spaced out by sep, starts at text[i], and
// where it ends.
func spacedAt(text string, i int, sec, sep string) (int, bool) {
	p := i + 1
	for k := 1; k < len(sec); k++ {
		if p+len(sep) >= len(text) || text[p:p+len(sep)] != sep || text[p+len(sep)] != sec[k] {
			return 0, false
		}
		p += len(sep) + 1
	}
	return p, true
}

func alnum(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// formTail is where a text ends with the beginning of an encoded secret
// (a body cut mid-token), token included, or -1. Call it with mu held.
func formTail(text string) int {
	at := -1
	for _, n := range needles {
		for k := len(n.s) - 1; k >= encMinLen; k-- {
			if strings.HasSuffix(text, n.s[:k]) {
				if from, _ := extend(text, len(text)-k, len(text), n); at < 0 || from < at {
					at = from
				}
				break
			}
		}
	}
	return at
}
