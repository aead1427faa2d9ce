// Package redact keeps known secret values (tokens, API keys, passwords
// given to a launched server) out of everything benchci writes: the
// terminal, results files, server logs and PR comments. Servers echo what
// they were sent (a 401 body quoting the key, a server printing its
// environment), so every output is filtered, not only the obvious ones.
//
// The set of secrets is process-wide: a secret is a secret everywhere.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

// minLen is the shortest value treated as a secret: masking "1" or "on"
// everywhere would garble the output and protect nothing.
const minLen = 6

var (
	mu      sync.RWMutex
	secrets []string
)

// Add registers secret values (and their JSON-escaped forms, as they
// appear in results files, and, for those of encMinLen bytes or more,
// their base64 and hex encodings and spaced-out spellings); short or
// empty ones are ignored.
func Add(values ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, v := range values {
		if len(v) < minLen {
			continue
		}
		for _, form := range []string{v, jsonForm(v)} {
			known := false
			for _, s := range secrets {
				known = known || s == form
			}
			if !known {
				secrets = append(secrets, form)
			}
		}
		addForms(v)
	}
}

// AddURL registers the password in a URL's user:password, and the pair
// itself: a client sends them as Basic auth, and a server quoting its
// Authorization header back quotes base64 of "user:password".
func AddURL(rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	if pw, ok := u.User.Password(); ok {
		Add(pw, u.User.Username()+":"+pw)
	}
}

func jsonForm(v string) string {
	b, _ := json.Marshal(v)
	return string(b[1 : len(b)-1])
}

// sensitiveName matches environment variable names whose values are
// secrets by convention.
var sensitiveName = regexp.MustCompile(`(?i)(token|secret|passw|key|credential|auth|cookie|session)`)

// SensitiveName reports whether an environment variable's name says its
// value is a secret.
func SensitiveName(name string) bool { return sensitiveName.MatchString(name) }

// AddEnv registers the values of env (KEY=VALUE or a map's entries)
// whose names look like secrets.
func AddEnv(env map[string]string) {
	for k, v := range env {
		if sensitiveName.MatchString(k) {
			Add(v)
		}
	}
}

// String returns s with every known secret masked.
func String(s string) string {
	mu.RLock()
	defer mu.RUnlock()
	return mask(s, false)
}

// mask masks every known secret in s, as written and encoded, and with
// tail a secret's beginning at s's end. Call it with mu held.
func mask(s string, tail bool) string {
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	return maskEncoded(s, tail)
}

// partialMin is the shortest tail of a text that is masked for being the
// beginning of a secret: a text cut mid-secret (a body read up to a limit)
// keeps that beginning, which no longer matches the whole secret.
const partialMin = 4

// Cut masks every known secret in s, and a secret's beginning at its end
// (s may itself have been cut mid-secret, as a body read up to a limit
// is), and only then shortens it to n bytes on a character boundary,
// saying how much was left out. Masking after a cut would miss a secret
// the cut split: every truncation of outside text goes through Cut.
func Cut(s string, n int) string {
	mu.RLock()
	s = mask(s, true)
	mu.RUnlock()
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)-cut) + " more bytes)"
}

// Bytes is String for bytes; it returns b itself when nothing matched.
//
// Secrets echoed encoded (JSON escapes, percent-encoding) are masked in
// texts up to maxDecoded bytes: every write to a terminal or a log, a
// report, a comment. A larger text (a big results file) gets the literal
// pass only; the server text in it was masked, encoded forms included,
// when it came in (Cut).
func Bytes(b []byte) []byte {
	mu.RLock()
	defer mu.RUnlock()
	for _, sec := range secrets {
		if bytes.Contains(b, []byte(sec)) {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(Mask))
		}
	}
	if len(b) <= maxDecoded && len(secrets) > 0 {
		if m := maskEncoded(string(b), false); m != string(b) {
			return []byte(m)
		}
	}
	return b
}

// maxDecoded bounds the texts searched for encoded secrets.
const maxDecoded = 4 << 20

// Writer masks secrets in what is written through it. A line writer holds
// back an unfinished line, so a secret split across two writes (a child
// process's output arriving in pieces) is still masked; Flush writes what
// is held. A plain writer masks each write as it comes, for output whose
// writes are whole (benchci's own messages, a progress bar's redraws).
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	lines bool
}

// NewWriter returns a Writer masking each write to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// NewLineWriter returns a Writer masking whole lines written to w.
func NewLineWriter(w io.Writer) *Writer { return &Writer{w: w, lines: true} }

func (r *Writer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.lines {
		// Bytes never modifies what it is given: no copy is needed.
		if _, err := r.w.Write(Bytes(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	r.buf = append(r.buf, p...)
	i := bytes.LastIndexAny(r.buf, "\r\n")
	// Line ends end what can be judged; a line that never ends is written
	// once it is long, keeping the last stretch in case a secret spans it.
	if i < 0 && len(r.buf) > 64<<10 {
		i = len(r.buf) - 4<<10
	}
	if i < 0 {
		return len(p), nil
	}
	// Written before the held rest moves down over it.
	_, err := r.w.Write(Bytes(r.buf[:i+1]))
	r.buf = append(r.buf[:0], r.buf[i+1:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the writer written to, so that a caller can ask whether
// it is a terminal.
func (r *Writer) Unwrap() io.Writer { return r.w }

// Flush writes what is held back.
func (r *Writer) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) == 0 {
		return nil
	}
	out := Bytes(r.buf)
	r.buf = r.buf[:0]
	_, err := r.w.Write(out)
	return err
}
