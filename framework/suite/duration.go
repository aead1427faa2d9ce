package suite

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written in suites as a Go duration string
// ("60s", "500ms", "1m30s"). Strings keep units explicit: a bare number is
// ambiguous between seconds and milliseconds, which is how SLOs go wrong.
type Duration time.Duration

// UnmarshalText parses a duration string such as "60s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as \"60s\" or \"500ms\", got %q", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration in Go's canonical form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
