package github

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const token = "ghs_secret-token-value"

// fakeGitHub is an in-memory pull request's comment thread behind the REST
// endpoints go-github calls. It checks every request the way GitHub would.
type fakeGitHub struct {
	t        *testing.T
	mu       sync.Mutex
	comments []map[string]any
	nextID   int64
	requests []string
	// self is the token's login that GET /user returns; "" answers 403,
	// as GitHub does for Actions' GITHUB_TOKEN, whose comments are then
	// by the bot "github-actions[bot]".
	self string
	// fail, when set, answers a request instead of the normal handler.
	fail func(r *http.Request, n int) (status int, header http.Header, body string, ok bool)
}

func newFake(t *testing.T, existing int) (*fakeGitHub, *httptest.Server) {
	f := &fakeGitHub{t: t, nextID: 1000, self: "benchci-bot"}
	for i := range existing {
		f.addBy("someone", "User", fmt.Sprintf("unrelated comment %d", i))
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// add adds a comment by the token's own identity.
func (f *fakeGitHub) add(body string) map[string]any {
	if f.self == "" {
		return f.addBy("github-actions[bot]", "Bot", body)
	}
	return f.addBy(f.self, "User", body)
}

func (f *fakeGitHub) addBy(login, typ, body string) map[string]any {
	f.nextID++
	c := map[string]any{"id": f.nextID, "body": body, "html_url": fmt.Sprintf("https://github.test/o/r/pull/7#issuecomment-%d", f.nextID),
		"user": map[string]any{"login": login, "type": typ}}
	f.comments = append(f.comments, c)
	return c
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	if got := r.Header.Get("Authorization"); got != "Bearer "+token {
		f.t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
	}
	if !strings.HasPrefix(r.Header.Get("User-Agent"), "go-github") || !strings.Contains(r.Header.Get("Accept"), "application/vnd.github") {
		f.t.Errorf("headers %v", r.Header)
	}
	if f.fail != nil {
		if status, h, body, ok := f.fail(r, len(f.requests)); ok {
			for k, v := range h {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return
		}
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/user":
		if f.self == "" {
			http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"login": f.self, "type": "User"})
	case r.Method == http.MethodGet && r.URL.Path == "/repos/o/r/issues/7/comments":
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if per != 100 {
			f.t.Errorf("per_page %d, want 100", per)
		}
		page = max(page, 1)
		lo, hi := (page-1)*per, min(page*per, len(f.comments))
		if hi < len(f.comments) {
			w.Header().Set("Link", fmt.Sprintf(`<http://%s/repos/o/r/issues/7/comments?per_page=%d&page=%d>; rel="next"`, r.Host, per, page+1))
		}
		json.NewEncoder(w).Encode(f.comments[min(lo, hi):hi])
	case r.Method == http.MethodPost && r.URL.Path == "/repos/o/r/issues/7/comments":
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
			f.t.Errorf("create body: %v %q", err, in.Body)
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(f.add(in.Body))
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/o/r/issues/comments/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/repos/o/r/issues/comments/"), 10, 64)
		var in struct{ Body string }
		json.NewDecoder(r.Body).Decode(&in)
		for _, c := range f.comments {
			if c["id"] == id {
				c["body"] = in.Body
				json.NewEncoder(w).Encode(c)
				return
			}
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	default:
		f.t.Errorf("unexpected %s %s", r.Method, r.URL)
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

func (f *fakeGitHub) withMarker(marker string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, c := range f.comments {
		if strings.Contains(c["body"].(string), marker) {
			out = append(out, c)
		}
	}
	return out
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	if d >= time.Second {
		// go-github itself refuses requests until a secondary limit's
		// Retry-After has passed, so that wait must be real.
		time.Sleep(d)
	}
	return nil
}

func newCommenter(t *testing.T, srv *httptest.Server, sl *sleeps) *Commenter {
	t.Helper()
	c, err := New(token, "o/r", Options{APIURL: srv.URL, Backoff: 10 * time.Millisecond, Sleep: sl.sleep})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const marker = "<!-- benchci:suites -->"

func TestUpsertCreatesThenUpdates(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t, 3)
	c := newCommenter(t, srv, &sleeps{})
	url1, err := c.Upsert(context.Background(), 7, marker, marker+"\nfirst")
	if err != nil {
		t.Fatal(err)
	}
	url2, err := c.Upsert(context.Background(), 7, marker, "second") // marker added when missing
	if err != nil {
		t.Fatal(err)
	}
	got := f.withMarker(marker)
	if len(got) != 1 || url1 != url2 || !strings.HasSuffix(got[0]["body"].(string), "second") {
		t.Fatalf("comments with marker %v; urls %s %s", got, url1, url2)
	}
	if len(f.comments) != 4 {
		t.Errorf("%d comments, want the 3 unrelated ones and ours", len(f.comments))
	}
	// The identity is looked up once, when a marked comment is first seen.
	want := []string{"GET /repos/o/r/issues/7/comments", "POST /repos/o/r/issues/7/comments", "GET /repos/o/r/issues/7/comments", "GET /user", "PATCH /repos/o/r/issues/comments/1004"}
	if strings.Join(f.requests, ",") != strings.Join(want, ",") {
		t.Errorf("requests %v, want %v", f.requests, want)
	}
}

func TestUpsertFindsMarkerOnLaterPage(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t, 230)
	f.add(marker + "\nold")
	for i := range 20 {
		f.add(fmt.Sprintf("later %d", i))
	}
	c := newCommenter(t, srv, &sleeps{})
	if _, err := c.Upsert(context.Background(), 7, marker, marker+"\nnew"); err != nil {
		t.Fatal(err)
	}
	got := f.withMarker(marker)
	if len(got) != 1 || !strings.HasSuffix(got[0]["body"].(string), "new") {
		t.Fatalf("comments with marker %v", got)
	}
	gets := 0
	for _, r := range f.requests {
		if strings.HasPrefix(r, "GET /repos") {
			gets++
		}
	}
	if gets != 3 {
		t.Errorf("%d list pages fetched, want 3 (the marker is on page 3)", gets)
	}
}

func TestRetriesServerErrorsAndSecondaryLimits(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t, 0)
	f.fail = func(r *http.Request, n int) (int, http.Header, string, bool) {
		switch n {
		case 1, 2:
			return http.StatusBadGateway, nil, `{"message":"Server Error"}`, true
		case 3:
			h := http.Header{"Retry-After": {"1"}}
			return http.StatusForbidden, h, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, true
		}
		return 0, nil, "", false
	}
	sl := &sleeps{}
	c := newCommenter(t, srv, sl)
	if _, err := c.Upsert(context.Background(), 7, marker, "body"); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, time.Second}
	if fmt.Sprint(sl.d) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", sl.d, want)
	}
	if len(f.withMarker(marker)) != 1 {
		t.Error("comment not created after retries")
	}
}

func TestGivesUpAfterAttempts(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t, 0)
	f.fail = func(*http.Request, int) (int, http.Header, string, bool) {
		return http.StatusServiceUnavailable, nil, `{"message":"unavailable"}`, true
	}
	c := newCommenter(t, srv, &sleeps{})
	_, err := c.Upsert(context.Background(), 7, marker, "body")
	if err == nil || !strings.Contains(err.Error(), "attempt 4 of 4") {
		t.Errorf("error %v", err)
	}
	if len(f.requests) != 4 {
		t.Errorf("%d requests, want 4", len(f.requests))
	}
}

func TestForkPullRequest403(t *testing.T) {
	t.Parallel()
	f, srv := newFake(t, 0)
	f.fail = func(r *http.Request, _ int) (int, http.Header, string, bool) {
		if r.Method == http.MethodPost {
			return http.StatusForbidden, nil, `{"message":"Resource not accessible by integration"}`, true
		}
		return 0, nil, "", false
	}
	c := newCommenter(t, srv, &sleeps{})
	_, err := c.Upsert(context.Background(), 7, marker, "body")
	if err == nil || !strings.Contains(err.Error(), "fork") || !strings.Contains(err.Error(), "Resource not accessible") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Error("the error message contains the token")
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for _, repo := range []string{"", "o", "o/", "/r", "o/r/x"} {
		if _, err := New(token, repo, Options{}); err == nil {
			t.Errorf("repo %q accepted", repo)
		}
	}
	if _, err := New("", "o/r", Options{}); err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Errorf("empty token: %v", err)
	}
}

// Anyone can write the marker in a comment of their own; the sticky comment
// is only ever the token's own: by its login where GET /user answers, by a
// bot author where it does not (Actions' GITHUB_TOKEN).
func TestUpsertIgnoresMarkerInOthersComments(t *testing.T) {
	t.Parallel()
	for _, self := range []string{"benchci-bot", ""} {
		f, srv := newFake(t, 0)
		f.self = self
		f.addBy("mallory", "User", marker+"\nhijacked")
		f.add(marker + "\nours")
		c := newCommenter(t, srv, &sleeps{})
		if _, err := c.Upsert(context.Background(), 7, marker, marker+"\nnew"); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		bodies := []string{f.comments[0]["body"].(string), f.comments[1]["body"].(string)}
		n := len(f.comments)
		f.mu.Unlock()
		if n != 2 || !strings.HasSuffix(bodies[0], "hijacked") || !strings.HasSuffix(bodies[1], "new") {
			t.Errorf("self %q: %d comments, bodies %q: want ours edited and mallory's untouched", self, n, bodies)
		}
	}
}

// Nothing a GitHub server says can hold the verdict back: an hour's
// Retry-After fails the comment at once, and endless pages are cut.
func TestHostileGitHubIsBounded(t *testing.T) {
	t.Parallel()
	const limited = `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	f, srv := newFake(t, 0)
	f.fail = func(r *http.Request, n int) (int, http.Header, string, bool) {
		return http.StatusForbidden, http.Header{"Retry-After": {"3600"}}, limited, true
	}
	sl := &sleeps{}
	_, err := newCommenter(t, srv, sl).Upsert(context.Background(), 7, marker, "body")
	if err == nil || !strings.Contains(err.Error(), "asks to wait 1h0m0s") || len(sl.d) != 0 {
		t.Errorf("Retry-After 3600: %v, waits %v", err, sl.d)
	}

	f, srv = newFake(t, 0)
	f.fail = func(r *http.Request, n int) (int, http.Header, string, bool) {
		// Every page says there is another.
		return http.StatusOK, http.Header{"Link": {fmt.Sprintf(`<http://%s/repos/o/r/issues/7/comments?per_page=100&page=%d>; rel="next"`, r.Host, n+1)}}, `[]`, true
	}
	c, err := New(token, "o/r", Options{APIURL: srv.URL, Sleep: (&sleeps{}).sleep, MaxPages: 7})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(context.Background(), 7, marker, "body"); err == nil || !strings.Contains(err.Error(), "more than 7 pages") {
		t.Errorf("endless pages: %v", err)
	}
	f.mu.Lock()
	if n := len(f.requests); n != 7 {
		t.Errorf("%d requests, want 7 pages", n)
	}
	f.mu.Unlock()
}

// A redirect to another host never carries the token there.
func TestTokenNeverLeavesTheAPIHost(t *testing.T) {
	t.Parallel()
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		io.WriteString(w, "[]")
	}))
	defer other.Close()
	f, srv := newFake(t, 0)
	f.fail = func(r *http.Request, n int) (int, http.Header, string, bool) {
		return http.StatusTemporaryRedirect, http.Header{"Location": {other.URL + r.URL.Path}}, "", true
	}
	_, err := newCommenter(t, srv, &sleeps{}).Upsert(context.Background(), 7, marker, "body")
	if err == nil || !strings.Contains(err.Error(), "redirected to another host") {
		t.Errorf("redirect: %v", err)
	}
	if leaked.Load() {
		t.Error("the token was sent to another host")
	}
}
