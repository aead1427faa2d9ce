// Package configdiff says what a change under test changed in the
// serving config, base → candidate: the launch command's flags, its
// environment, the URL and model, the simulator's constants, what the
// server said about itself, and which workload fields moved. It is what a
// reviewer looks for first in a pull request's comment, before any figure.
package configdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/redact"
)

// Change is one difference: What names it ("launch --step-base", "env
// HF_HOME", "model"); Base and Cand are the values, "(none)" where a side
// has none, "(hidden)" for a secret's value.
type Change struct {
	What string `json:"what"`
	Base string `json:"base"`
	Cand string `json:"cand"`
}

func (c Change) String() string { return fmt.Sprintf("%s: %s → %s", c.What, c.Base, c.Cand) }

const (
	none   = "(none)"
	hidden = "(hidden)"
	// maxChanges bounds what one suite lists: a comment is read, not
	// scrolled; the rest is counted.
	maxChanges = 40
)

// recordedTarget is the part of a recorded suite definition that says
// where requests went.
type recordedTarget struct {
	Target struct {
		Kind    string `json:"kind"`
		Profile string `json:"profile"`
		URL     string `json:"url"`
		Model   string `json:"model"`
		Launch  *struct {
			Command []string          `json:"command"`
			Env     map[string]string `json:"env"`
			Dir     string            `json:"dir"`
		} `json:"launch"`
		Spec   json.RawMessage `json:"spec"`
		Sim    json.RawMessage `json:"sim"`
		Faults json.RawMessage `json:"faults"`
		Proxy  json.RawMessage `json:"proxy"`
	} `json:"target"`
}

// Diff lists what differs between the config base was measured with and
// cand's, in a fixed order: target, server, workload. Empty: the same
// config, a rerun.
func Diff(base, cand *result.File) []Change {
	var out []Change
	var bt, ct recordedTarget
	// A definition that does not decode here leaves its side empty: the
	// comparison refuses such a file elsewhere; this only describes.
	_ = json.Unmarshal(base.Suite.Definition, &bt)
	_ = json.Unmarshal(cand.Suite.Definition, &ct)
	b, c := bt.Target, ct.Target
	add := func(what, bv, cv string) {
		if bv != cv {
			out = append(out, Change{What: what, Base: orNone(bv), Cand: orNone(cv)})
		}
	}
	add("target kind", b.Kind, c.Kind)
	add("sim profile", b.Profile, c.Profile)
	out = append(out, jsonChanges("sim spec", b.Spec, c.Spec)...)
	out = append(out, jsonChanges("sim", b.Sim, c.Sim)...)
	out = append(out, jsonChanges("sim faults", b.Faults, c.Faults)...)
	out = append(out, jsonChanges("proxy", b.Proxy, c.Proxy)...)
	if b.Launch != nil || c.Launch != nil {
		var bc, cc []string
		var be, ce map[string]string
		var bd, cd string
		if b.Launch != nil {
			bc, be, bd = b.Launch.Command, b.Launch.Env, b.Launch.Dir
		}
		if c.Launch != nil {
			cc, ce, cd = c.Launch.Command, c.Launch.Env, c.Launch.Dir
		}
		out = append(out, argvChanges(bc, cc)...)
		out = append(out, envChanges(be, ce)...)
		add("launch dir", bd, cd)
	}
	// The URL the suite names, not the one the run used: a simulator or
	// a proxy listens on a port drawn for each run.
	add("url", b.URL, c.URL)
	add("model asked", b.Model, c.Model)
	add("model (as the server named it)", base.Target.Model, cand.Target.Model)
	if len(out) == 0 && (base.Target.Sim != nil || cand.Target.Sim != nil) {
		// Nothing in the suite moved the simulator, but its constants did:
		// the profile changed in benchci itself.
		out = append(out, jsonChanges("simulator", marshal(base.Target.Sim), marshal(cand.Target.Sim))...)
	}
	be, ce := engine(base.Engine), engine(cand.Engine)
	add("engine (as the server reported it)", be, ce)
	if base.Suite.WorkloadHash != cand.Suite.WorkloadHash {
		out = append(out, workloadChanges(base.Suite.Definition, cand.Suite.Definition)...)
	}
	if len(out) > maxChanges {
		more := len(out) - maxChanges
		out = append(out[:maxChanges], Change{What: fmt.Sprintf("… %d more", more), Base: "", Cand: ""})
	}
	return out
}

func engine(e *result.Engine) string {
	if e == nil {
		return ""
	}
	if e.Version == "" {
		return e.Name + " (version unknown)"
	}
	return e.Name + " " + e.Version
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

func marshal(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// argvChanges diffs two launch commands as a person reads them: the
// program and positional arguments by position, flags by name (--flag
// value, --flag=value, or a bare --flag), so a reordered command does not
// read as everything changed.
func argvChanges(base, cand []string) []Change {
	bp, bf := parseArgv(base)
	cp, cf := parseArgv(cand)
	var out []Change
	for i := range max(len(bp), len(cp)) {
		bv, cv := at(bp, i), at(cp, i)
		if bv != cv {
			what := fmt.Sprintf("launch argument %d", i+1)
			if i == 0 {
				what = "launch program"
			}
			out = append(out, Change{What: what, Base: orNone(bv), Cand: orNone(cv)})
		}
	}
	for _, k := range unionKeys(bf, cf) {
		bv, bok := bf[k]
		cv, cok := cf[k]
		switch {
		case !bok:
			out = append(out, Change{What: "launch " + k, Base: none, Cand: flagValue(cv)})
		case !cok:
			out = append(out, Change{What: "launch " + k, Base: flagValue(bv), Cand: none})
		case bv != cv:
			out = append(out, Change{What: "launch " + k, Base: flagValue(bv), Cand: flagValue(cv)})
		}
	}
	return out
}

// parseArgv splits argv into positional arguments and flags. A flag's
// value is the next word unless that is a flag too; repeated flags keep
// every value.
func parseArgv(argv []string) ([]string, map[string]string) {
	var pos []string
	flags := map[string]string{}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			val, hasVal = argv[i+1], true
			i++
		}
		if !hasVal {
			val = "\x00" // a bare switch
		}
		if prev, ok := flags[name]; ok {
			val = prev + " " + val
		}
		flags[name] = val
	}
	return pos, flags
}

func flagValue(v string) string {
	if v == "\x00" {
		return "(set)"
	}
	return strings.ReplaceAll(v, "\x00", "(set)")
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// envChanges diffs two environments by name; a value whose name says it
// is a secret is never shown, only that it changed.
func envChanges(base, cand map[string]string) []Change {
	var out []Change
	for _, k := range unionKeys(base, cand) {
		bv, bok := base[k]
		cv, cok := cand[k]
		if bok == cok && bv == cv {
			continue
		}
		show := func(v string, ok bool) string {
			switch {
			case !ok:
				return none
			case redact.SensitiveName(k):
				return hidden
			}
			return v
		}
		c := Change{What: "env " + k, Base: show(bv, bok), Cand: show(cv, cok)}
		if c.Base == hidden && c.Cand == hidden {
			c.Cand = hidden + ", changed"
		}
		out = append(out, c)
	}
	return out
}

// jsonChanges diffs two JSON values leaf by leaf, each named by its path
// under prefix.
func jsonChanges(prefix string, base, cand json.RawMessage) []Change {
	if bytes.Equal(base, cand) {
		return nil
	}
	bf, cf := map[string]string{}, map[string]string{}
	flatten(prefix, decode(base), bf)
	flatten(prefix, decode(cand), cf)
	var out []Change
	for _, k := range unionKeys(bf, cf) {
		if bf[k] != cf[k] {
			out = append(out, Change{What: k, Base: orNone(bf[k]), Cand: orNone(cf[k])})
		}
	}
	return out
}

func decode(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

func flatten(path string, v any, out map[string]string) {
	switch t := v.(type) {
	case nil:
	case map[string]any:
		for k, e := range t {
			flatten(path+" "+k, e, out)
		}
	case []any:
		// Lists are values: a reordered list of rates is a change.
		b, _ := json.Marshal(t)
		out[path] = string(b)
	default:
		out[path] = fmt.Sprint(t)
	}
}

// workloadChanges names the workload-defining fields that differ (those
// suite.WorkloadHash covers), each by its path.
func workloadChanges(base, cand json.RawMessage) []Change {
	var out []Change
	bd, _ := decode(base).(map[string]any)
	cd, _ := decode(cand).(map[string]any)
	for _, field := range []string{"api", "request", "workload", "sweep", "trials"} {
		bf, cf := map[string]string{}, map[string]string{}
		flatten(field, bd[field], bf)
		flatten(field, cd[field], cf)
		for _, k := range unionKeys(bf, cf) {
			if bf[k] != cf[k] {
				out = append(out, Change{What: "workload: " + strings.ReplaceAll(k, " ", "."), Base: orNone(bf[k]), Cand: orNone(cf[k])})
			}
		}
	}
	return out
}
