package suite

import (
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// validateTelemetry checks the hardware exporters scraped through each
// point.
func validateTelemetry(s *Suite) []*FieldError {
	var p fieldErrors
	names := map[string]bool{}
	for i, t := range s.Telemetry {
		at := fmt.Sprintf("telemetry[%d]", i)
		switch {
		case !telemetryName.MatchString(t.Name):
			p.add(at+".name", "%q: use lower-case letters, digits and '_' (it prefixes the figures, e.g. dcgm.power_mean_w)", t.Name)
		case names[t.Name]:
			p.add(at+".name", "%q is used twice", t.Name)
		}
		names[t.Name] = true
		if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add(at+".url", "want the metrics' full http(s) address, e.g. http://127.0.0.1:9400/metrics, got %q", t.URL)
		}
		if t.Interval != 0 && (t.Interval < Duration(100*time.Millisecond) || t.Interval > MaxTelemetryInterval) {
			p.add(at+".interval", "must be 100ms to 1m, got %s", t.Interval.D())
		}
	}
	return p
}

var telemetryName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
