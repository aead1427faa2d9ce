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
	switch t.Kind {
	case TargetSim:
		return validateSimTarget(path, t, known)
	case TargetURL, TargetLaunch:
		return validateServerTarget(path, t)
	case "":
		return []*FieldError{{Path: path, Msg: "required: b.target.sim('llama3-8b-h100'), b.target.url('http://127.0.0.1:8000') or b.target.launch([...], url=...)"}}
	default:
		return []*FieldError{{Path: JoinPath(path, "kind"), Msg: fmt.Sprintf("unknown target kind %q (known: sim, url, launch)", t.Kind)}}
	}
}

// validateSimTarget checks the simulator's profile or spec, its faults and
// its overrides.
func validateSimTarget(path string, t *Target, known *Known) []*FieldError {
	var p fieldErrors
	if t.Proxy != nil {
		p.add(JoinPath(path, "proxy"), "the fault proxy goes in front of a real server; the simulator has faults of its own (faults={...})")
	}
	switch {
	case t.Profile == "" && t.Spec == nil:
		p.add(JoinPath(path, "profile"), "required: the simulator profile, or a spec of model and GPU cards")
	case t.Profile != "" && t.Spec != nil:
		p.add(JoinPath(path, "spec"), "a sim target takes a profile or a spec, not both")
	case known != nil && known.Sim != nil:
		if field, err := known.Sim(t); err != nil {
			p.add(JoinPath(path, field), "%s", err)
		}
	case known != nil && t.Profile != "" && !slices.Contains(known.SimProfiles, t.Profile):
		p.add(JoinPath(path, "profile"), "unknown simulator profile %q%s", t.Profile, didyoumean.Hint(t.Profile, known.SimProfiles))
	}
	if f := t.Faults; f != nil {
		sum := f.ErrorRate + f.ResetRate + f.StallRate + f.MalformedRate + f.WrongUsageRate
		if f.ErrorRate < 0 || f.ResetRate < 0 || f.StallRate < 0 || f.MalformedRate < 0 || f.WrongUsageRate < 0 || sum > 1 {
			p.add(JoinPath(path, "faults"), "rates must be between 0 and 1 and add up to at most 1, got %v in all", sum)
		}
		if !(f.WrongStructuredRate >= 0 && f.WrongStructuredRate <= 1) {
			p.add(JoinPath(path, "faults.wrong_structured_rate"), "must be a fraction between 0 and 1, got %v", f.WrongStructuredRate)
		}
		if f.StallRate > 0 && f.Stall <= 0 {
			p.add(JoinPath(path, "faults.stall"), "a stall_rate needs a stall duration")
		}
	}
	if o := t.Sim; o != nil && (o.MaxNumSeqs < 0 || o.MaxBatchedTokens < 0 || o.TokensPerStep < 0 || o.StepBase < 0 || o.DecodePerSeq < 0 || o.PrefillPerToken < 0) {
		p.add(JoinPath(path, "sim"), "overrides must not be negative")
	}
	return p
}

// validateServerTarget checks a real server's address and the fault proxy
// in front of it, and how to launch it when benchci starts it.
func validateServerTarget(path string, t *Target) []*FieldError {
	var p fieldErrors
	if f := t.Proxy; f != nil {
		sum := f.Rate429 + f.Rate503 + f.ResetRate + f.StallRate
		if f.Rate429 < 0 || f.Rate503 < 0 || f.ResetRate < 0 || f.StallRate < 0 || sum > 1 {
			p.add(JoinPath(path, "proxy"), "rates must be between 0 and 1 and add up to at most 1, got %v in all", sum)
		}
		if f.Latency < 0 || f.RetryAfter < 0 || f.Stall < 0 || f.SlowFirstByte < 0 || f.Seed < 0 {
			p.add(JoinPath(path, "proxy"), "durations and the seed must not be negative")
		}
		if d := max(f.Latency, f.RetryAfter, f.Stall, f.SlowFirstByte); d > MaxFaultDelay {
			p.add(JoinPath(path, "proxy"), "a delay of %v is more than the %v a fault may hold a request", d.D(), MaxFaultDelay.D())
		}
		if f.StallRate > 0 && f.Stall <= 0 {
			p.add(JoinPath(path, "proxy.stall"), "a stall_rate needs a stall duration")
		}
	}
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(JoinPath(path, "url"), "want an http(s) base URL such as http://127.0.0.1:8000, got %q", t.URL)
	}
	if t.Kind == TargetLaunch {
		p = append(p, validateLaunch(path, t.Launch)...)
	}
	return p
}

// validateLaunch checks how a server is started, waited for and stopped,
// and fills in its defaults.
func validateLaunch(path string, l *Launch) []*FieldError {
	var p fieldErrors
	switch {
	case l == nil || len(l.Command) == 0 || l.Command[0] == "":
		p.add(JoinPath(path, "launch.command"), "required: the argv that starts the server")
	default:
		if l.Health == "" {
			l.Health = "/v1/models"
		}
		if !strings.HasPrefix(l.Health, "/") {
			p.add(JoinPath(path, "launch.health"), "want a path such as /health, got %q", l.Health)
		}
		if l.StartTimeout == 0 {
			l.StartTimeout = Duration(10 * time.Minute)
		}
		if l.StopGrace == 0 {
			l.StopGrace = Duration(30 * time.Second)
		}
		if l.StartTimeout < 0 || l.StopGrace < 0 || l.WarmupRequests < 0 {
			p.add(JoinPath(path, "launch"), "timeouts and warmup_requests must not be negative")
		}
		if l.StartTimeout > MaxStartTimeout {
			p.add(JoinPath(path, "launch.start_timeout"), "%v is more than the %v a server may take to start", l.StartTimeout.D(), MaxStartTimeout.D())
		}
		if l.StopGrace > MaxStopGrace {
			p.add(JoinPath(path, "launch.stop_grace"), "%v is more than the %v a server may take to stop", l.StopGrace.D(), MaxStopGrace.D())
		}
		if l.WarmupRequests > MaxWarmupRequests {
			p.add(JoinPath(path, "launch.warmup_requests"), "%d is more than the %d a launch may send", l.WarmupRequests, MaxWarmupRequests)
		}
		if l.Per == "" {
			l.Per = "suite"
		}
		if l.Per != "suite" && l.Per != "point" {
			p.add(JoinPath(path, "launch.per"), "want \"suite\" or \"point\", got %q", l.Per)
		}
	}
	return p
}
