package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/github"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/report"
)

type commentOptions struct {
	repo string
	pr   int
	key  string
}

func (o *commentOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.repo, "repo", os.Getenv("GITHUB_REPOSITORY"), "repository OWNER/NAME (default $GITHUB_REPOSITORY)")
	cmd.Flags().IntVar(&o.pr, "pr", 0, "pull request number (default: from $GITHUB_EVENT_PATH)")
	cmd.Flags().StringVar(&o.key, "key", "benchci", "sticky comment key: one comment per key and pull request")
}

func commentCmd() *cobra.Command {
	var o commentOptions
	cmd := &cobra.Command{
		Use:   "comment REPORT.md",
		Short: "Post or update the sticky pull-request comment",
		Long: `comment puts REPORT.md (from benchci ci or compare --format markdown) on the
pull request as one sticky comment, edited on every run. The token comes
from $GITHUB_TOKEN and is never printed; $GITHUB_API_URL selects GitHub
Enterprise Server.`,
		Example: `  benchci compare --format markdown baselines/quickstart.json results/quickstart.json > report.md
  GITHUB_TOKEN=... benchci comment --repo OWNER/NAME --pr 42 report.md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := result.ReadBytes(args[0])
			if err != nil {
				return err
			}
			url, err := postComment(cmd, o, string(body))
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "comment:", url)
			return nil
		},
	}
	o.register(cmd)
	return cmd
}

func postComment(cmd *cobra.Command, o commentOptions, body string) (string, error) {
	pr := o.pr
	if pr == 0 {
		pr = prFromEvent()
	}
	if pr == 0 {
		return "", &exitError{exitUsage, fmt.Errorf("no pull request: pass --pr N (or run on a pull_request event)")}
	}
	c, err := github.New(os.Getenv("GITHUB_TOKEN"), o.repo, github.Options{APIURL: os.Getenv("GITHUB_API_URL")})
	if err != nil {
		return "", err
	}
	// Posting is bounded on its own too: a slow GitHub delays the verdict
	// by two minutes at most.
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
	defer cancel()
	return c.Upsert(ctx, pr, report.Marker(o.key), redact.String(body))
}

// prFromEvent reads the pull request number from the Actions event payload.
func prFromEvent() int { return readEvent().pr }

func prNumber(event []byte) int { return parseEvent(event).pr }

// actionsEvent is what benchci reads of the Actions event payload: the
// pull request's number and its base commit.
type actionsEvent struct {
	pr      int
	baseSHA string
}

// readEvent reads $GITHUB_EVENT_PATH under the results reader's bounds;
// the zero event outside Actions or when it does not read.
func readEvent() actionsEvent {
	path := os.Getenv("GITHUB_EVENT_PATH")
	if path == "" {
		return actionsEvent{}
	}
	data, err := result.ReadBytes(path)
	if err != nil {
		return actionsEvent{}
	}
	return parseEvent(data)
}

func parseEvent(data []byte) actionsEvent {
	var ev struct {
		Number      int `json:"number"`
		PullRequest struct {
			Number int `json:"number"`
			Base   struct {
				SHA string `json:"sha"`
			} `json:"base"`
		} `json:"pull_request"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return actionsEvent{}
	}
	out := actionsEvent{pr: ev.Number, baseSHA: ev.PullRequest.Base.SHA}
	if ev.PullRequest.Number != 0 {
		out.pr = ev.PullRequest.Number
	}
	return out
}
