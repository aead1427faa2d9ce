package suite

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Bounds on the counts a suite gives that size what a run allocates or
// repeats: each is far above what a real benchmark asks for, and far
// below what exhausts a machine. A suite past one is refused by
// validation, with the field's file:line, before anything is built.
const (
	// MaxTrials bounds trials: each repeats every point.
	MaxTrials = 100
	// MaxPoints bounds a sweep's points (rates, concurrencies, or an
	// auto sweep's points), each measured and kept in the result.
	MaxPoints = 1000
	// MaxConcurrency bounds a concurrency level and max_concurrency: the
	// requests one client machine holds in flight (cf. MaxRate).
	MaxConcurrency = 100_000
	// MaxModels bounds the models of a mix (workload.models): results
	// keep figures for every model of a point.
	MaxModels = 256
	// MaxImagesPerRequest bounds workload.images.count: every image is a
	// data URL in the request's body. Draws above it are clipped to it.
	MaxImagesPerRequest = 32
	// MaxImageSizes bounds workload.images.sizes, each synthesized in a
	// few variants before the run.
	MaxImageSizes = 16
	// MaxImagePixels bounds one synthesized image (4096 x 4096): its
	// pixels and its encoding are held while it is made.
	MaxImagePixels = 4096 * 4096
	// MaxBatch bounds workload.batch, the inputs of one embeddings
	// request (OpenAI's limit). Draws above it are clipped to it.
	MaxBatch = 2048
	// MaxTurns bounds a multi_turn session, whose turns are built, each
	// with the history before it, when the session starts.
	MaxTurns = 256
	// MaxPrefixes bounds shared_prefix prompts' prefixes; all of them
	// together hold at most MaxTokens tokens of text.
	MaxPrefixes = 1024
	// MaxEmpiricalValues bounds an empirical distribution's values
	// (recorded lengths belong in a file: kind 'file').
	MaxEmpiricalValues = 65536
	// MaxWarmupRequests bounds a launched server's warm-up requests.
	MaxWarmupRequests = 10_000
	// MaxDataFile bounds the data files a suite names (datasets, traces,
	// recorded lengths, images): they are read as a run reads them.
	MaxDataFile = 1 << 30
)

// validateCount checks a distribution of counts (images per request,
// inputs per embeddings request) against its bound: a value above it is
// refused, not clipped silently.
func validateCount(path string, d Dist, limit int) []*FieldError {
	errs := validateDist(path, d, 1)
	bad := func(field string, v float64) {
		errs = append(errs, &FieldError{Path: JoinPath(path, field), Msg: fmt.Sprintf("%v is more than the %d a request may have", v, limit)})
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"value", d.Value}, {"mean", d.Mean}, {"median", d.Median}, {"min", d.Min}, {"max", d.Max}} {
		if f.v > float64(limit) && f.v <= MaxTokens {
			bad(f.name, f.v)
		}
	}
	for i, v := range d.Values {
		if v > float64(limit) && v <= MaxTokens {
			bad(fmt.Sprintf("values[%d]", i), v)
		}
	}
	return errs
}

// validWeight reports whether a model's weight is a finite number of at
// least 0.
func validWeight(w float64) bool { return w >= 0 && !math.IsInf(w, 0) }

// launchKey names where a launched server listens, so that two variants
// on one port are found however their URLs write the host: localhost,
// 127.0.0.1, [::1], 0.0.0.0 and [::] are all this machine (a server on
// the unspecified address holds the port on every one), and a URL
// without a port has its scheme's. It is "" for a URL that does not
// parse.
func launchKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	h := strings.ToLower(host)
	if ip := net.ParseIP(h); h == "localhost" || strings.HasSuffix(h, ".localhost") || (ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback) || ip.IsUnspecified())) {
		h = "this machine"
	}
	return net.JoinHostPort(h, port)
}

// Bounds on the times a suite gives: a wait past them would not end in
// any CI job (the longest jobs run for hours), so it is a typo or an
// attack, refused at its field.
const (
	// MaxWait bounds a request's timeout and a session's think time.
	MaxWait = Duration(24 * time.Hour)
	// MaxStartTimeout and MaxStopGrace bound a launched server's start
	// (large models load for many minutes) and its stop.
	MaxStartTimeout = Duration(2 * time.Hour)
	MaxStopGrace    = Duration(10 * time.Minute)
	// MaxFaultDelay bounds each delay a fault proxy adds to a request.
	MaxFaultDelay = Duration(10 * time.Minute)
	// MaxTelemetryInterval bounds how long a point waits between scrapes
	// of an exporter.
	MaxTelemetryInterval = Duration(time.Minute)
)

// MaxImageFile bounds one image file of workload.images.dir: a file past
// it is refused by its size before it is read.
const MaxImageFile = 16 << 20

// ImageFiles lists a directory's PNG and JPEG files, by name.
func ImageFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".png", ".jpg", ".jpeg":
			if e.Type().IsRegular() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no .png, .jpg or .jpeg files", dir)
	}
	return out, nil
}
