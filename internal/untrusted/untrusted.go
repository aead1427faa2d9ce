// Package untrusted makes text from outside (a server's error body, a
// model id, an engine's version) safe to show anywhere benchci writes: a
// terminal, a CI log, markdown, HTML. Control characters could move the
// cursor, clear a screen or end a line early; bidirectional controls
// could show text in another order than it is stored.
package untrusted

import (
	"strings"
	"unicode"
)

// Text returns s with control characters (C0 but tab, DEL, C1, and the
// line and paragraph separators) as spaces, and bidirectional controls
// and invisible characters (zero-width spaces and joiners, soft hyphens,
// tags, fillers) as U+FFFD, made visible rather than obeyed.
func Text(s string) string {
	if !strings.ContainsFunc(s, unsafe) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case Bidi(r) || Invisible(r):
			return '\uFFFD'
		case unsafe(r):
			return ' '
		}
		return r
	}, s)
}

// Invisible reports whether r takes no visible space: a format character
// (zero-width space and joiners, soft hyphen, word joiner, BOM, tags), a
// combining grapheme joiner, or a Hangul filler. Text holding one can
// look like other text, a secret split by one like no secret.
func Invisible(r rune) bool {
	switch r {
	case '\u034F', '\u115F', '\u1160', '\u3164', '\uFFA0':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Safe reports whether s holds no character Text would replace.
func Safe(s string) bool { return !strings.ContainsFunc(s, unsafe) }

func unsafe(r rune) bool {
	return r < ' ' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u2028' || r == '\u2029' || Bidi(r) || Invisible(r)
}

// Bidi reports whether r is a bidirectional control.
func Bidi(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' || r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// Clip cuts s to n runes, the last an ellipsis, when it is longer: text
// from outside is shown, not the whole of it.
func Clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
