package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/redact/redacttest"
)

func TestRedact(t *testing.T) {
	Add("sk-live-0123456789", "ghs_abcdefghijklmnop", "1", "")
	AddEnv(map[string]string{"HF_TOKEN": "hf_zyxwvutsrqpo", "PORT": "8000000"})
	in := `401: invalid key sk-live-0123456789; token ghs_abcdefghijklmnop, hf "hf_zyxwvutsrqpo", port 8000000, count 1`
	got := String(in)
	for _, s := range []string{"sk-live-0123456789", "ghs_abcdefghijklmnop", "hf_zyxwvutsrqpo"} {
		if strings.Contains(got, s) {
			t.Errorf("%q kept %s", got, s)
		}
	}
	if !strings.Contains(got, "8000000") || !strings.Contains(got, "count 1") {
		t.Errorf("over-redacted: %q", got)
	}
	// Split across writes, and unfinished at the end.
	var out bytes.Buffer
	w := NewLineWriter(&out)
	w.Write([]byte("env: KEY=sk-live-01234"))
	w.Write([]byte("56789\nlast ghs_abcdefghijklmnop"))
	w.Flush()
	if strings.Contains(out.String(), "sk-live") || strings.Contains(out.String(), "ghs_") || !strings.Contains(out.String(), "last "+Mask) {
		t.Errorf("writer: %q", out.String())
	}
}

func TestCutMasksBeforeCutting(t *testing.T) {
	const key = "cut-secret-0123456789"
	Add(key)
	for _, tc := range []struct {
		name, in string
		n        int
	}{
		{"key straddling the cut", strings.Repeat("A", 274) + key, 280},
		{"text already cut mid-key", strings.Repeat("A", 10) + key[:9], 300},
		{"key inside", "x" + key + "y", 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Cut(tc.in, tc.n)
			for k := partialMin; k <= len(key); k++ {
				if strings.Contains(got, key[:k]) {
					t.Fatalf("Cut = %q holds the key's first %d bytes", got, k)
				}
			}
		})
	}
	if got := Cut("héllo wörld", 2); got != "h…(12 more bytes)" {
		t.Errorf("Cut on a character boundary = %q", got)
	}
	if got := Cut("short", 300); got != "short" {
		t.Errorf("Cut of a short text = %q", got)
	}
}

// N1: a server that echoes a key JSON-escaped ("\/" for "/", "\u0072"
// for "r") or percent-encoded still has it masked, in whole texts and in
// texts cut mid-key.
func TestEncodedSecretsAreMasked(t *testing.T) {
	const key = "Zq9XwV7uT5/sR3pN1mL8kJ6hG4fD2+abc/xyz0"
	Add(key)
	for _, in := range []string{
		`{"error":{"message":"invalid key Zq9XwV7uT5\/sR3pN1mL8kJ6hG4fD2+abc\/xyz0"}}`,
		`invalid key Zq9XwV7uT5\u002fsR3pN1mL8kJ6hG4fD2+abc/xyz0 sent`,
		`key=Zq9XwV7uT5%2FsR3pN1mL8kJ6hG4fD2%2Babc%2Fxyz0&x=1`,
		`k Zq9XwV7\u0075T5\/sR3pN1mL8kJ6hG4fD2+abc\/xyz0`,
	} {
		for name, got := range map[string]string{"String": String(in), "Bytes": string(Bytes([]byte(in))), "Cut": Cut(in, 1000)} {
			if strings.Contains(got, "Zq9X") || !strings.Contains(got, Mask) {
				t.Errorf("%s(%q) = %q", name, in, got)
			}
		}
	}
	// Cut mid-key, encoded.
	in := strings.Repeat("A", 40) + `Zq9XwV7uT5\/sR3p`
	if got := Cut(in, 1000); strings.Contains(got, "Zq9X") {
		t.Errorf("Cut of an encoded key cut mid-way = %q", got)
	}
	// Text without the key is untouched, escapes and all.
	if in := `{"a":"b\/c \u00e9 100%"}`; String(in) != in {
		t.Errorf("String changed %q to %q", in, String(in))
	}
}

// FuzzMaskEncoded: whatever surrounds it, the secret is masked as written,
// escaped, and base64- or hex-encoded: no decoding of the output gives it
// back.
func FuzzMaskEncoded(f *testing.F) {
	const secret = "fuzz-secret-value"
	Add(secret)
	f.Add(`fuzz-secret\u002dvalue`, "", uint8(0))
	f.Add(`%66uzz-secret-value\`, "", uint8(0))
	f.Add("x", "yz", uint8(1))
	f.Add(`\`, "%", uint8(2))
	f.Add("%6", "a", uint8(4))
	f.Fuzz(func(t *testing.T, before, after string, kind uint8) {
		// The secret, between before and after, in one of its forms (the
		// neighbours set its base64 offset).
		var s string
		switch inner := before + secret + after; kind % 5 {
		case 0:
			s = inner
		case 1:
			s = before + base64.StdEncoding.EncodeToString([]byte(inner)) + after
		case 2:
			s = before + base64.RawURLEncoding.EncodeToString([]byte(inner)) + after
		case 3:
			s = before + hex.EncodeToString([]byte(inner)) + after
		case 4:
			s = before + strings.ToUpper(hex.EncodeToString([]byte(inner))) + after
		}
		if got := String(s); redacttest.Leak(got, secret, false) != "" {
			t.Errorf("String(%q) = %q keeps the secret (%s)", s, got, redacttest.Leak(got, secret, false))
		}
		Cut(s, 10)
	})
}

// The second attack's bypasses: a key cut inside an escape, escaped
// twice, as HTML character references, or split by invisible characters.
func TestEncodedSecretsBypasses(t *testing.T) {
	const key = "sk-proj-Abc123/def+GHI_jklMNOpqrs789xyz"
	Add(key)
	hidden := func(got string) bool {
		for k := partialMin; k <= len(key); k++ {
			if strings.Contains(got, key[:k]) {
				return false
			}
		}
		return strings.Contains(got, Mask)
	}
	for name, in := range map[string]string{
		"cut mid-escape":       strings.Repeat("A", 159) + key[:len(key)-1] + `\u0`,
		"cut mid-percent":      "x " + key[:20] + "%2",
		"escaped twice":        `sk-\\u0070roj-Abc123\\/def+GHI_jklMNOpqrs789xyz`,
		"percent twice":        `sk-proj-Abc123%252Fdef%252BGHI_jklMNOpqrs789xyz`,
		"html references":      `sk-proj-Abc123&#x2F;def&#43;GHI_jklMNOpqrs789xyz`,
		"zero-width inside":    "sk-pr\u200boj-Abc123/def+GHI_jkl\u2060MNOpqrs789xyz",
		"json then percent":    `sk-proj-Abc123\u002Fdef%2BGHI_jklMNOpqrs789xyz`,
		"cut mid-html":         "x " + key[:24] + "&#x4",
		"zero-width, then cut": "x sk-pr\u200boj-Abc123/def",
	} {
		if got := Cut(in, 1000); !hidden(got) {
			t.Errorf("%s: Cut(%q) = %q", name, in, got)
		}
		if name != "cut mid-escape" && !strings.HasPrefix(name, "cut") && !strings.HasSuffix(name, "cut") {
			if got := String(in); !hidden(got) {
				t.Errorf("%s: String(%q) = %q", name, in, got)
			}
		}
	}
}
