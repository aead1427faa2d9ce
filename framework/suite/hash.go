package suite

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/go-multierror"
)

// WorkloadHash returns the hash of the suite's workload-defining fields.
func WorkloadHash(s *Suite) string {
	w := struct {
		API      API      `json:"api"`
		Request  Request  `json:"request"`
		Workload Workload `json:"workload"`
		Sweep    Sweep    `json:"sweep"`
		Trials   int      `json:"trials"`
	}{s.API, s.Request, s.Workload, s.Sweep, s.Trials}
	// Calibration changes how prompts reach their token targets on a given
	// server, not the targets: it is not part of the workload.
	w.Workload.Prompts.Calibrate = false
	// A salt changes the prompts' text, not their lengths or pacing: runs
	// salted apart (to keep a server's cache cold) stay comparable.
	w.Workload.Prompts.Salt = ""
	b, err := json.Marshal(w)
	if err != nil {
		panic(fmt.Sprintf("suite: marshal workload: %v", err)) // plain data; cannot fail
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Decode decodes an evaluated suite, applies defaults and validates its
// structure, without checking names against a binary's registries: it is
// what reading a suite recorded in a results file needs. A definition an
// earlier build recorded is first read as it meant then (migrateRecorded),
// with times and trials recorded before they were bounded at the bound
// (clampRecorded).
func Decode(data []byte) (*Suite, error) {
	return decode(migrateRecorded(data), nil, clampRecorded)
}

// migrateRecorded rewrites what earlier builds recorded and this one
// refuses into what it meant: request.retry.budget 0 was no cap until
// f069c87, which refuses it in a suite (it allowed twenty attempts a
// request where a budget was meant) and reads no budget as no cap.
// Without this a results file or baseline recorded with it no longer
// decodes, and the rules it was recorded with are lost to the review.
func migrateRecorded(data []byte) []byte {
	if !bytes.Contains(data, []byte(`"budget"`)) {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	if dec.Decode(&v) != nil {
		return data // Decode says why
	}
	req, _ := v["request"].(map[string]any)
	retry, _ := req["retry"].(map[string]any)
	if b, ok := retry["budget"].(json.Number); !ok || !isZero(b) {
		return data
	}
	delete(retry, "budget")
	out, err := json.Marshal(v)
	if err != nil {
		return data
	}
	return out
}

func isZero(n json.Number) bool {
	f, err := n.Float64()
	return err == nil && f == 0
}

// DecodeWith decodes a suite evaluated now: it checks the names known is
// given for, and migrates nothing (a value past a bound is refused).
func DecodeWith(data []byte, known *Known) (*Suite, error) { return decode(data, known, nil) }

// clampRecorded brings the times and the trials a definition recorded
// before they were bounded (776e9eb, 6855499) within their bounds. They
// say how a run waited and repeated, which the recorded run already did;
// reading them back as the bound changes no verdict a reader draws from
// the definition (its rules), where refusing them lost those rules and
// made the file compare no more. A suite file past a bound is refused
// still, at its field.
func clampRecorded(s *Suite) {
	s.Request.Timeout = min(s.Request.Timeout, MaxWait)
	s.Workload.Prompts.ThinkTime = min(s.Workload.Prompts.ThinkTime, MaxWait)
	s.Trials = min(s.Trials, MaxTrials)
	clampTarget(&s.Target)
	for _, v := range s.Variants {
		if v.Target != nil {
			clampTarget(v.Target)
		}
	}
	for i := range s.Telemetry {
		t := &s.Telemetry[i]
		t.Interval = min(t.Interval, MaxTelemetryInterval)
	}
}

func clampTarget(t *Target) {
	if l := t.Launch; l != nil {
		l.StartTimeout = min(l.StartTimeout, MaxStartTimeout)
		l.StopGrace = min(l.StopGrace, MaxStopGrace)
	}
	if f := t.Proxy; f != nil {
		f.Latency, f.RetryAfter = min(f.Latency, MaxFaultDelay), min(f.RetryAfter, MaxFaultDelay)
		f.Stall, f.SlowFirstByte = min(f.Stall, MaxFaultDelay), min(f.SlowFirstByte, MaxFaultDelay)
	}
}

func decode(data []byte, known *Known, migrate func(*Suite)) (*Suite, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode suite: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, multierror.Append(nil, &FieldError{Msg: fmt.Sprintf("a suite must evaluate to an object, got %s", jsonKind(v))})
	}
	s := Default()
	d := &decoder{}
	d.decode("", v, reflect.ValueOf(s).Elem())
	if migrate != nil {
		migrate(s)
	}
	// Validate even after decode errors, so that every problem is listed,
	// but say nothing more of a field that could not be decoded: its zero
	// value would only draw a second, misleading complaint.
	errs := d.errs
	for _, e := range d.errs {
		sharedField(e)
	}
	for _, e := range validate(s, known) {
		if !slices.ContainsFunc(d.errs, func(de *FieldError) bool { return de.Path == e.Path }) {
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		return s, nil
	}
	var me *multierror.Error
	for _, e := range errs {
		me = multierror.Append(me, e)
	}
	return nil, me
}

// sharedField explains an unknown field in a variant that the variants
// share: a variant cannot change what is sent.
func sharedField(e *FieldError) {
	rest, ok := strings.CutPrefix(e.Path, "variants.")
	if !ok || !strings.HasPrefix(e.Msg, "unknown field") {
		return
	}
	_, field, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(field, ".") {
		return
	}
	switch field {
	case "workload", "sweep", "slos", "api", "trials", "goodput", "tolerance", "sanity", "tokenizer":
		e.Msg = fmt.Sprintf("a variant cannot set %s: variants share the suite's, so every one is sent the same requests and judged alike (a variant sets target, request, cost, sim)", field)
	}
}
