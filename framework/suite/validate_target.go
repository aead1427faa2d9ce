package suite

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/benchci/benchci/internal/didyoumean"
)

// validateTarget checks a target written at path ("target", or a
// variant's).
func validateTarget(path string, t *Target, known *Known) []*FieldError {
	var errs []*FieldError
	bad := func(at, format string, args ...any) {
		errs = append(errs, &FieldError{Path: at, Msg: fmt.Sprintf(format, args...)})
	}
	switch t.Kind {
	case TargetSim:
		if t.Proxy != nil {
			bad(JoinPath(path, "proxy"), "the fault proxy goes in front of a real server; the simulator has faults of its own (faults={...})")
		}
		switch {
		case t.Profile == "" && t.Spec == nil:
			bad(JoinPath(path, "profile"), "required: the simulator profile, or a spec of model and GPU cards")
		case t.Profile != "" && t.Spec != nil:
			bad(JoinPath(path, "spec"), "a sim target takes a profile or a spec, not both")
		case known != nil && known.Sim != nil:
			if field, err := known.Sim(t); err != nil {
				bad(JoinPath(path, field), "%s", err)
			}
		case known != nil && t.Profile != "" && !slices.Contains(known.SimProfiles, t.Profile):
			bad(JoinPath(path, "profile"), "unknown simulator profile %q%s", t.Profile, didyoumean.Hint(t.Profile, known.SimProfiles))
		}
		if f := t.Faults; f != nil {
			sum := f.ErrorRate + f.ResetRate + f.StallRate + f.MalformedRate + f.WrongUsageRate
			if f.ErrorRate < 0 || f.ResetRate < 0 || f.StallRate < 0 || f.MalformedRate < 0 || f.WrongUsageRate < 0 || sum > 1 {
				bad(JoinPath(path, "faults"), "rates must be between 0 and 1 and add up to at most 1, got %v in all", sum)
			}
			if !(f.WrongStructuredRate >= 0 && f.WrongStructuredRate <= 1) {
				bad(JoinPath(path, "faults.wrong_structured_rate"), "must be a fraction between 0 and 1, got %v", f.WrongStructuredRate)
			}
			if f.StallRate > 0 && f.Stall <= 0 {
				bad(JoinPath(path, "faults.stall"), "a stall_rate needs a stall duration")
			}
		}
		if o := t.Sim; o != nil && (o.MaxNumSeqs < 0 || o.MaxBatchedTokens < 0 || o.TokensPerStep < 0 || o.StepBase < 0 || o.DecodePerSeq < 0 || o.PrefillPerToken < 0) {
			bad(JoinPath(path, "sim"), "overrides must not be negative")
		}
	case TargetURL, TargetLaunch:
		if f := t.Proxy; f != nil {
			sum := f.Rate429 + f.Rate503 + f.ResetRate + f.StallRate
			if f.Rate429 < 0 || f.Rate503 < 0 || f.ResetRate < 0 || f.StallRate < 0 || sum > 1 {
				bad(JoinPath(path, "proxy"), "rates must be between 0 and 1 and add up to at most 1, got %v in all", sum)
			}
			if f.Latency < 0 || f.RetryAfter < 0 || f.Stall < 0 || f.SlowFirstByte < 0 || f.Seed < 0 {
				bad(JoinPath(path, "proxy"), "durations and the seed must not be negative")
			}
			if f.StallRate > 0 && f.Stall <= 0 {
				bad(JoinPath(path, "proxy.stall"), "a stall_rate needs a stall duration")
			}
		}
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(JoinPath(path, "url"), "want an http(s) base URL such as http://127.0.0.1:8000, got %q", t.URL)
		}
		if t.Kind == TargetLaunch {
			l := t.Launch
			switch {
			case l == nil || len(l.Command) == 0 || l.Command[0] == "":
				bad(JoinPath(path, "launch.command"), "required: the argv that starts the server")
			default:
				if l.Health == "" {
					l.Health = "/v1/models"
				}
				if !strings.HasPrefix(l.Health, "/") {
					bad(JoinPath(path, "launch.health"), "want a path such as /health, got %q", l.Health)
				}
				if l.StartTimeout == 0 {
					l.StartTimeout = Duration(10 * time.Minute)
				}
				if l.StopGrace == 0 {
					l.StopGrace = Duration(30 * time.Second)
				}
				if l.StartTimeout < 0 || l.StopGrace < 0 || l.WarmupRequests < 0 {
					bad(JoinPath(path, "launch"), "timeouts and warmup_requests must not be negative")
				}
				if l.WarmupRequests > MaxWarmupRequests {
					bad(JoinPath(path, "launch.warmup_requests"), "%d is more than the %d a launch may send", l.WarmupRequests, MaxWarmupRequests)
				}
				if l.Per == "" {
					l.Per = "suite"
				}
				if l.Per != "suite" && l.Per != "point" {
					bad(JoinPath(path, "launch.per"), "want \"suite\" or \"point\", got %q", l.Per)
				}
			}
		}
	case "":
		bad(path, "required: b.target.sim('llama3-8b-h100'), b.target.url('http://127.0.0.1:8000') or b.target.launch([...], url=...)")
	default:
		bad(JoinPath(path, "kind"), "unknown target kind %q (known: sim, url, launch)", t.Kind)
	}
	return errs
}
