package redact

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/benchci/benchci/internal/untrusted"
)

// A server can echo a secret encoded: JSON may escape any character
// ("sk-p\u0072oj", "a\/b"), a URL percent-encodes ("a%2Fb"). Matching
// the literal secret misses those, so text holding an escape is decoded,
// the secrets searched in the decoded text, and the original bytes behind
// each match masked.

// decoded is text with its escapes decoded; from[i] and to[i] bound the
// original bytes behind decoded byte i.
type decoded struct {
	text     []byte
	from, to []int32
}

func decode(s string) decoded {
	d := decoded{text: make([]byte, 0, len(s)), from: make([]int32, 0, len(s)), to: make([]int32, 0, len(s))}
	emit := func(b []byte, from, to int) {
		for _, c := range b {
			d.text = append(d.text, c)
			d.from = append(d.from, int32(from))
			d.to = append(d.to, int32(to))
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			if r, n := jsonEscape(s[i:]); n > 0 {
				var buf [4]byte
				emit(buf[:utf8.EncodeRune(buf[:], r)], i, i+n)
				i += n
				continue
			}
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			emit([]byte{unhex(s[i+1])<<4 | unhex(s[i+2])}, i, i+3)
			i += 3
			continue
		case c == '&':
			if r, n := htmlEntity(s[i:]); n > 0 {
				var buf [4]byte
				emit(buf[:utf8.EncodeRune(buf[:], r)], i, i+n)
				i += n
				continue
			}
		case c >= utf8.RuneSelf:
			// An invisible character inside a secret hides it from a
			// literal match, not from a reader: it decodes to nothing.
			if r, n := utf8.DecodeRuneInString(s[i:]); untrusted.Invisible(r) {
				i += n
				continue
			}
		}
		emit([]byte{c}, i, i+1)
		i++
	}
	return d
}

// htmlEntity decodes the character reference at the start of s (&#47;,
// &#x2F;, &amp; and the other four of XML), and how many bytes it takes.
func htmlEntity(s string) (rune, int) {
	end := strings.IndexByte(s[:min(len(s), 12)], ';')
	if end < 2 {
		return 0, 0
	}
	body := s[1:end]
	switch body {
	case "amp":
		return '&', end + 1
	case "lt":
		return '<', end + 1
	case "gt":
		return '>', end + 1
	case "quot":
		return '"', end + 1
	case "apos":
		return '\'', end + 1
	}
	if body[0] != '#' || len(body) < 2 {
		return 0, 0
	}
	base, digits := 10, body[1:]
	if digits[0] == 'x' || digits[0] == 'X' {
		base, digits = 16, digits[1:]
	}
	v, err := strconv.ParseInt(digits, base, 32)
	if err != nil || v < 0 || v > unicode.MaxRune {
		return 0, 0
	}
	return rune(v), end + 1
}

// incompleteEscape is where an escape cut short begins at the end of s
// (a body read up to a limit can end inside one), or len(s).
func incompleteEscape(s string) int {
	for k := 1; k <= min(len(s), 11); k++ {
		tail := s[len(s)-k:]
		switch tail[0] {
		case '\\':
			if k == 1 || tail[1] == 'u' && k < 6 && allHex(tail[2:]) {
				return len(s) - k
			}
		case '%':
			if k < 3 && allHex(tail[1:]) {
				return len(s) - k
			}
		case '&':
			if !strings.ContainsRune(tail, ';') && (k == 1 || tail[1] == '#' || allAlpha(tail[1:])) {
				return len(s) - k
			}
		}
	}
	return len(s)
}

func allHex(s string) bool {
	for i := range len(s) {
		if !isHex(s[i]) && !(i == 0 && (s[i] == 'x' || s[i] == 'X')) {
			return false
		}
	}
	return true
}

func allAlpha(s string) bool {
	for i := range len(s) {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// layers decodes s up to three times (a secret escaped twice, or
// percent-encoded inside JSON), each layer's offsets still into s.
func layers(s string) []decoded {
	d := decode(s)
	out := []decoded{d}
	for range 2 {
		if !encodedOrHidden(string(d.text)) {
			break
		}
		next := decode(string(d.text))
		if len(next.text) == len(d.text) {
			break
		}
		for i := range next.text {
			f, t := next.from[i], next.to[i]
			next.from[i], next.to[i] = d.from[f], d.to[t-1]
		}
		out = append(out, next)
		d = next
	}
	return out
}

// encodedOrHidden reports whether s may hold a secret in another form.
// Every text masked goes through it, so ASCII, which holds no invisible
// character, is looked at a byte at a time, without Unicode's tables.
func encodedOrHidden(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c == '\\' || c == '%' || c == '&' {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if untrusted.Invisible(r) {
			return true
		}
		i += n
	}
	return false
}

// jsonEscape decodes the JSON escape at the start of s, and how many bytes
// it takes (0: none).
func jsonEscape(s string) (rune, int) {
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					return pair, 12
				}
			}
		}
		return r, 6
	}
	return 0, 0
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		if !isHex(s[i]) {
			return 0, false
		}
		r = r<<4 | rune(unhex(s[i]))
	}
	return r, true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// tailWindow is how much of a text's end is searched for a secret's
// beginning: a secret of a few hundred bytes, every byte escaped.
const tailWindow = 4 << 10

// maskEncoded masks in s every secret that appears once s's escapes are
// decoded, every encoded or spaced-out form of one (forms.go), and, when
// tail is set, a secret's beginning at s's end (s may have been cut).
// Call it with mu held.
func maskEncoded(s string, tail bool) string {
	if len(secrets) == 0 {
		return s
	}
	type span struct{ from, to int }
	var spans []span
	// The encoded forms are searched as written (decoding an escape-like
	// "%63" or "\u0063" inside hex or base64 would break it up), and in
	// each decoded layer: one may be escaped in turn ("\/" in base64
	// quoted in JSON, "%2B" in a URL's).
	findForms(s, func(from, to int) { spans = append(spans, span{from, to}) })
	if len(s) <= maxDecoded && encodedOrHidden(s) {
		for _, d := range layers(s) {
			for _, sec := range secrets {
				for at := 0; ; {
					i := bytes.Index(d.text[at:], []byte(sec))
					if i < 0 {
						break
					}
					i += at
					spans = append(spans, span{int(d.from[i]), int(d.to[i+len(sec)-1])})
					at = i + len(sec)
				}
			}
			findForms(string(d.text), func(from, to int) {
				spans = append(spans, span{int(d.from[from]), int(d.to[to-1])})
			})
		}
	}
	if tail {
		// The text may end mid-secret, and mid-escape: the secret's
		// beginning is searched in what decodes before that escape, and
		// masked to the end.
		// Only the end is searched, so the text may be of any length; the
		// end is what decodes from its last tailWindow bytes, plain text
		// included (it decodes to itself).
		cut := incompleteEscape(s)
		from := max(0, cut-tailWindow)
		if at := formTail(s[from:]); at >= 0 {
			spans = append(spans, span{from + at, len(s)})
		}
		for _, d := range layers(s[from:cut]) {
			for _, sec := range secrets {
				for k := min(len(sec)-1, len(d.text)); k >= partialMin; k-- {
					if bytes.HasSuffix(d.text, []byte(sec[:k])) {
						spans = append(spans, span{from + int(d.from[len(d.text)-k]), len(s)})
						break
					}
				}
			}
			// A token cut mid-way: its encoded beginning.
			if at := formTail(string(d.text)); at >= 0 {
				spans = append(spans, span{from + int(d.from[at]), len(s)})
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	// Mask from the end, so earlier offsets stay valid; overlapping spans
	// merge.
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(b.from, a.from) })
	out := s
	end := len(s) + 1
	for _, sp := range spans {
		if sp.from >= end {
			continue
		}
		to := min(sp.to, end)
		out = out[:sp.from] + Mask + out[to:]
		end = sp.from
	}
	return out
}
