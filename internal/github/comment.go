// Package github keeps one sticky pull-request comment per suite set up to
// date through the GitHub REST API (go-github): found by a hidden marker,
// edited on every run instead of adding another.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/benchci/benchci/internal/httpsafe"
)

// Options configure a Commenter.
type Options struct {
	// APIURL is the REST API root: https://api.github.com, or a GitHub
	// Enterprise Server's https://HOST/api/v3 (Actions sets GITHUB_API_URL).
	APIURL string
	// Attempts bounds tries per request on 5xx and secondary rate limits
	// (default 4); Backoff is the first wait, doubled each retry (default 2s).
	Attempts int
	Backoff  time.Duration
	// Sleep waits between attempts; tests replace it.
	Sleep func(context.Context, time.Duration) error
	// HTTPClient is the underlying client (default: one with a 30 s timeout
	// per request). Whatever is given, redirects to another host are
	// refused: go-github adds the token to every request it sends,
	// redirected ones included.
	HTTPClient *http.Client
	// MaxRetryAfter is the longest secondary-rate-limit wait honoured
	// (default 60 s); GitHub asking for more fails the comment at once,
	// so the verdict is not held back for an hour.
	MaxRetryAfter time.Duration
	// MaxPages bounds the pages of comments read to find the sticky one
	// (default 50, 5000 comments): a server whose Link: next never ends
	// cannot hold the run.
	MaxPages int
}

// Commenter posts and updates sticky comments on one repository.
type Commenter struct {
	c           *gh.Client
	owner, repo string
	opts        Options
	// login is the token's identity, once looked up ("" when it cannot be).
	whoOnce sync.Once
	login   string
}

// New returns a Commenter for repo ("OWNER/NAME") authenticating with token.
// The token is only ever placed in the Authorization header.
func New(token, repo string, opts Options) (*Commenter, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("github: repository %q: want OWNER/NAME", repo)
	}
	if token == "" {
		return nil, errors.New("github: no token: set GITHUB_TOKEN")
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 2 * time.Second
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = time.Minute
	}
	if opts.MaxPages <= 0 {
		opts.MaxPages = 50
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	if opts.HTTPClient != nil {
		copied := *opts.HTTPClient
		hc = &copied
	}
	hc.CheckRedirect = httpsafe.SameHost // the token is only sent to the API host
	c := gh.NewClient(hc).WithAuthToken(token)
	if opts.APIURL != "" && opts.APIURL != "https://api.github.com" {
		u, err := url.Parse(strings.TrimRight(opts.APIURL, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("github: API URL %q: %w", opts.APIURL, err)
		}
		c.BaseURL = u
	}
	return &Commenter{c: c, owner: owner, repo: name, opts: opts}, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Upsert makes the pull request's comment containing marker read body:
// it edits the existing one or creates it. It returns the comment's URL.
func (c *Commenter) Upsert(ctx context.Context, pr int, marker, body string) (string, error) {
	if !strings.Contains(body, marker) {
		body = marker + "\n" + body
	}
	existing, err := c.find(ctx, pr, marker)
	if err != nil {
		return "", err
	}
	var out *gh.IssueComment
	if existing != nil {
		err = c.retry(ctx, "edit comment", func() (*gh.Response, error) {
			var resp *gh.Response
			var err error
			out, resp, err = c.c.Issues.EditComment(ctx, c.owner, c.repo, existing.GetID(), &gh.IssueComment{Body: gh.String(body)})
			return resp, err
		})
	} else {
		err = c.retry(ctx, "create comment", func() (*gh.Response, error) {
			var resp *gh.Response
			var err error
			out, resp, err = c.c.Issues.CreateComment(ctx, c.owner, c.repo, pr, &gh.IssueComment{Body: gh.String(body)})
			return resp, err
		})
	}
	if err != nil {
		return "", err
	}
	return out.GetHTMLURL(), nil
}

// mine reports whether the comment was written by this token's identity:
// anyone can put the marker in a comment of their own, and editing theirs
// fails (403), which would block the sticky comment for good. The login
// comes from GET /user; tokens that cannot read it (GitHub Actions'
// GITHUB_TOKEN, an app installation token) act as a bot, which no person
// can post as, so then the comment's author must be a bot.
func (c *Commenter) mine(ctx context.Context, cm *gh.IssueComment) bool {
	c.whoOnce.Do(func() {
		if u, _, err := c.c.Users.Get(ctx, ""); err == nil {
			c.login = u.GetLogin()
		}
	})
	if c.login != "" {
		return strings.EqualFold(cm.GetUser().GetLogin(), c.login)
	}
	return cm.GetUser().GetType() == "Bot"
}

// find pages through the pull request's comments for the marker.
func (c *Commenter) find(ctx context.Context, pr int, marker string) (*gh.IssueComment, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for pages := 1; ; pages++ {
		if pages > c.opts.MaxPages {
			return nil, fmt.Errorf("github: list comments: more than %d pages; giving up", c.opts.MaxPages)
		}
		var page []*gh.IssueComment
		var resp *gh.Response
		err := c.retry(ctx, "list comments", func() (*gh.Response, error) {
			var err error
			page, resp, err = c.c.Issues.ListComments(ctx, c.owner, c.repo, pr, opts)
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		for _, cm := range page {
			if strings.Contains(cm.GetBody(), marker) && c.mine(ctx, cm) {
				return cm, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}

// retry runs call, retrying server errors and secondary rate limits with
// exponential backoff, and turns the errors users hit into advice.
func (c *Commenter) retry(ctx context.Context, what string, call func() (*gh.Response, error)) error {
	wait := c.opts.Backoff
	for attempt := 1; ; attempt++ {
		resp, err := call()
		if err == nil {
			return nil
		}
		var abuse *gh.AbuseRateLimitError
		var limit *gh.RateLimitError
		retryable := false
		pause := wait
		switch {
		case errors.As(err, &abuse):
			retryable = true
			if d := abuse.GetRetryAfter(); d > 0 {
				pause = d
			}
			if pause > c.opts.MaxRetryAfter {
				return fmt.Errorf("github: %s: secondary rate limit: GitHub asks to wait %v, longer than the %v benchci waits", what, pause.Round(time.Second), c.opts.MaxRetryAfter)
			}
		case errors.As(err, &limit):
			// The primary limit resets within the hour; waiting that long
			// in CI is worse than failing with the reset time.
			return fmt.Errorf("github: %s: rate limit exhausted until %s", what, limit.Rate.Reset.Format(time.RFC3339))
		case resp != nil && resp.StatusCode >= 500:
			retryable = true
		case resp != nil && resp.StatusCode == http.StatusForbidden:
			return fmt.Errorf("github: %s: 403 forbidden: %w. Pull requests from forks get a read-only GITHUB_TOKEN; "+
				"use the fork-safe pattern (pull_request uploads results, a workflow_run job comments), "+
				"or grant the workflow 'pull-requests: write'", what, err)
		case resp != nil && resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("github: %s: 404 not found: %w (is the repository and pull request number right, and can the token see it?)", what, err)
		case resp != nil && resp.StatusCode == http.StatusUnauthorized:
			return fmt.Errorf("github: %s: 401 unauthorized: the token was refused", what)
		}
		if !retryable || attempt >= c.opts.Attempts {
			return fmt.Errorf("github: %s (attempt %d of %d): %w", what, attempt, c.opts.Attempts, err)
		}
		if err := c.opts.Sleep(ctx, pause); err != nil {
			return fmt.Errorf("github: %s: %w", what, err)
		}
		wait *= 2
	}
}
