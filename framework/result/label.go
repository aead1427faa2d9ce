package result

import (
	"cmp"
	"strings"
)

// TargetLabel names the server a file measured, for people comparing
// runs: the engine and its version, the address and the model, each
// where known. The simulator is named by its profile, which fixes its
// model and hardware (its address changes every run).
func (f *File) TargetLabel() string {
	t := f.Target
	if t.Sim != nil {
		return "sim " + t.Sim.Name
	}
	label := strings.TrimSpace(t.Kind + " " + t.URL)
	if e := f.Engine; e != nil && e.Name != "unknown" && e.Name != "" {
		label = e.Name + " " + cmp.Or(e.Version, "(version unknown)") + " at " + t.URL
	}
	if t.Model != "" {
		label += ", model " + t.Model
	}
	return label
}
