package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/benchci/benchci/internal/httpsafe"
	"github.com/benchci/benchci/internal/promtext"
)

// Bounds on one scrape (package promtext's). An exporter is a program on
// the machine under test, and whatever it serves is read as hostile: a
// scrape past any of these fails whole, rather than being cut at the
// bound and read as if complete.
const (
	// MaxScrapeBytes bounds the exposition text read per scrape.
	MaxScrapeBytes = promtext.MaxBytes
	// MaxSeries bounds the samples one scrape may hold, all names together.
	MaxSeries = promtext.MaxSeries
	// scrapeTimeout bounds one scrape, from request to the text's end.
	scrapeTimeout = 5 * time.Second
)

// scrapeClient refuses a redirect to another host: what it answers would
// be passed off as the configured exporter's figures.
var scrapeClient = httpsafe.Client(0) // ctx bounds each scrape

// series is one metric in one scrape: its sum, count and extremes over
// label sets, and, for the metrics read per GPU across scrapes (energy
// counters), each label set's value.
type series = promtext.Series

// fetch reads one endpoint's metrics: per wanted metric name, the sum,
// count and extremes of its samples over label sets.
func fetch(ctx context.Context, url string, want map[string]bool) (map[string]series, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	if resp.ContentLength > MaxScrapeBytes {
		return nil, &promtext.LimitError{Msg: fmt.Sprintf("%s: %d bytes, more than the %d MiB a scrape may be", url, resp.ContentLength, MaxScrapeBytes>>20)}
	}
	return promtext.Parse(resp.Body, want)
}
