// Package httpsafe is the HTTP client for every request benchci makes to
// a URL it was given, other than the benchmark's own requests (package
// client): a Pushgateway, a telemetry exporter, an engine's /metrics and
// version probes, a launched server's health check, the GitHub API. Such
// a request may carry credentials (a URL's user:password sent as Basic
// auth, a token, an API key), and its answer is taken as the configured
// server's: a redirect to another host would send the first elsewhere and
// pass the second off as the server's, so it is refused, as an error.
package httpsafe

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// maxRedirects bounds the redirects followed within one host.
const maxRedirects = 5

// RedirectError is a redirect to another host, refused.
type RedirectError struct {
	From, To string // the hosts, host:port where the URL names a port
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server redirected to another host (%s, from %s); refused", e.To, e.From)
}

// SameHost is an http.Client's CheckRedirect that follows a redirect only
// to the first request's scheme and host, port included. A port is part
// of the host here: another port is another server (another process,
// maybe another user's), yet net/http would forward the Authorization
// header to it, since it compares domains without ports when it decides
// which headers follow a redirect.
func SameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0].URL
	if !strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme {
		to := req.URL.Host
		if req.URL.Scheme != first.Scheme {
			to = req.URL.Scheme + "://" + to
		}
		return &RedirectError{From: first.Host, To: to}
	}
	return nil
}

// Client returns a client whose requests end within timeout (0: no
// bound but the context's) and that refuses a redirect to another host.
func Client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, CheckRedirect: SameHost}
}

// Guard returns a copy of c (nil: http.DefaultClient) that refuses a
// redirect to another host, for a caller that was handed a client.
func Guard(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	copied := *c
	copied.CheckRedirect = SameHost
	return &copied
}
