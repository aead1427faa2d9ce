package redact

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/redact/redacttest"
)

// formsCanary's base64 holds '+' and '/' at some offset, so that the
// standard and URL-safe alphabets spell it differently.
const formsCanary = "canary-SECRET-0123456789~?>"

// F1 (issue 40): a secret echoed base64-encoded (at any offset inside a
// longer encoding, either alphabet), hex-encoded, spaced out, or as the
// Basic credentials of a URL's user:password, is masked: no decoding of
// what is left gives it back.
func TestEncodedFormsAreMasked(t *testing.T) {
	const basic = "u:canary-SECRET-123"
	Add(formsCanary, basic)
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	if b64(base64.StdEncoding, "x"+formsCanary) == b64(base64.URLEncoding, "x"+formsCanary) {
		t.Fatal("the canary's base64 is the same in both alphabets: the test would not tell them apart")
	}
	for _, tc := range []struct {
		name, in string
		secret   string
	}{
		{"base64 offset 0", "echo " + b64(base64.StdEncoding, formsCanary+"-tail") + " end", formsCanary},
		{"base64 offset 1", `{"echo":"` + b64(base64.StdEncoding, "x"+formsCanary+"yz") + `"}`, formsCanary},
		{"base64 offset 2", "echo=" + b64(base64.StdEncoding, "xy"+formsCanary+"z"), formsCanary},
		{"base64 inside a long token", "t " + b64(base64.StdEncoding, "Bearer "+formsCanary+" sent at 12:00"), formsCanary},
		{"base64url offset 0", "echo " + b64(base64.RawURLEncoding, formsCanary), formsCanary},
		{"base64url offset 1", "echo " + b64(base64.RawURLEncoding, "a"+formsCanary), formsCanary},
		{"base64url offset 2", "echo " + b64(base64.RawURLEncoding, "ab"+formsCanary), formsCanary},
		{"base64, JSON-escaped", `{"echo":"` + strings.ReplaceAll(b64(base64.StdEncoding, "x"+formsCanary), "/", `\/`) + `"}`, formsCanary},
		{"base64, percent-encoded", "echo?k=" + strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(b64(base64.StdEncoding, "xy"+formsCanary)), formsCanary},
		{"hex", "echo " + hex.EncodeToString([]byte(formsCanary)) + ".", formsCanary},
		{"upper hex", "echo 0x" + strings.ToUpper(hex.EncodeToString([]byte("::"+formsCanary+"::"))), formsCanary},
		{"spaced", "key: " + strings.Join(strings.Split(formsCanary, ""), " ") + " !", formsCanary},
		{"spaced with dots", "key: " + strings.Join(strings.Split(formsCanary, ""), ".") + ".", formsCanary},
		{"spaced with commas", "[" + strings.Join(strings.Split(formsCanary, ""), ", ") + "]", formsCanary},
		{"Basic credentials", "500: auth=Basic " + b64(base64.StdEncoding, basic), basic},
		{"Basic credentials, JSON", `{"headers":{"Authorization":["Basic ` + b64(base64.StdEncoding, basic) + `"]}}`, basic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if redacttest.Leak(tc.in, tc.secret, true) == "" {
				t.Fatalf("the test's input %q does not hold the secret", tc.in)
			}
			for name, got := range map[string]string{"String": String(tc.in), "Bytes": string(Bytes([]byte(tc.in))), "Cut": Cut(tc.in, 1<<10)} {
				if how := redacttest.Leak(got, tc.secret, true); how != "" || !strings.Contains(got, Mask) {
					t.Errorf("%s(%q) = %q: the secret is left %s", name, tc.in, got, how)
				}
			}
			// The password alone of user:password is registered too.
			if tc.secret == basic {
				if how := redacttest.Leak(String(tc.in), "canary-SECRET-123", true); how != "" {
					t.Errorf("the password is left %s", how)
				}
			}
		})
	}
	// A body cut mid-token keeps no readable beginning of the secret.
	enc := b64(base64.StdEncoding, "xy"+formsCanary)
	if got := Cut("echo "+enc[:20], 1<<10); strings.Contains(got, enc[3:12]) {
		t.Errorf("Cut mid-token = %q", got)
	}
	// Other base64, hex and spaced text is left alone.
	for _, in := range []string{
		"sha256:" + hex.EncodeToString([]byte("an unrelated digest value")),
		"id " + b64(base64.StdEncoding, "canary-SECRET-999 is another one"),
		"c a n a r y - S E C R E T - 9",
		"Basic " + b64(base64.StdEncoding, "u:other"),
	} {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
}

// Secrets under encMinLen bytes are masked as written only.
func TestShortSecretsMatchLiterally(t *testing.T) {
	const short = "pw7x-Q" // minLen <= len < encMinLen
	Add(short)
	if got := String("k " + short); strings.Contains(got, short) {
		t.Errorf("String = %q", got)
	}
	for _, in := range []string{hex.EncodeToString([]byte(short)), base64.StdEncoding.EncodeToString([]byte(short)), "p w 7 x - Q"} {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q: an encoding of a short secret was masked", in, got)
		}
	}
}

// AddURL registers a URL's password and user:password, whose base64 is
// the Basic credentials a client sends; a URL without one adds nothing.
func TestAddURL(t *testing.T) {
	AddURL("http://gw-user:url-PASS-4567@127.0.0.1:9091/")
	AddURL("http://127.0.0.1:9091/")
	AddURL("http://only-a-user@127.0.0.1:9091/")
	in := "auth=Basic " + base64.StdEncoding.EncodeToString([]byte("gw-user:url-PASS-4567")) + " url-PASS-4567 only-a-user"
	got := String(in)
	for _, s := range []string{"gw-user:url-PASS-4567", "url-PASS-4567"} {
		if how := redacttest.Leak(got, s, true); how != "" {
			t.Errorf("String(%q) = %q: %s left %s", in, got, s, how)
		}
	}
	if !strings.HasSuffix(got, " only-a-user") {
		t.Errorf("String(%q) = %q: a user name alone is no secret", in, got)
	}
}
