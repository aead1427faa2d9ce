package report

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

var update = flag.Bool("update", false, "rewrite golden files")

func lat(p50, p99 float64) result.Summary { return result.Summary{Count: 100, P50: p50, P99: p99} }

func sample() *result.File {
	pt := func(label string, rate, ttft float64, saturated bool) result.Point {
		p := result.Point{Label: label, Mode: "rate", Rate: rate, Trial: 1}
		p.Requests = result.Requests{Sent: 100, Completed: 99, Failed: 1, ErrorRate: 0.01,
			Errors: map[string]int{"http_503": 1}, LastError: map[string]string{"http_503": "HTTP 503: overloaded"}}
		p.Throughput = result.Throughput{Requests: rate * 0.99, OutputTokens: rate * 120}
		p.Latency = map[string]result.Summary{
			metric.TTFT: lat(ttft, ttft*3), metric.TPOT: lat(21.5, 30.25), metric.ITL: lat(20.1, 95),
			metric.E2E: lat(2500, 4100), metric.Lag: lat(0.05, 0.4),
		}
		p.Cost = &result.Cost{PerMOutput: 10 / rate}
		p.Schedule = result.Schedule{TargetRate: rate, ScheduledRate: rate, SendRate: rate}
		if saturated {
			p.Schedule.SendRate = rate * 0.97
			p.Schedule.ClientSaturated, p.Schedule.Reason = true, "P99 send lag 12.0 ms exceeds 10 ms"
			p.Tokens = result.Tokens{ChunkGaps: 1000, CoalescedGaps: 40}
		}
		return p
	}
	return &result.File{
		Suite:  result.Suite{Name: "chat"},
		Target: result.Target{Kind: "url", URL: "http://127.0.0.1:8000", Model: "llama"},
		Points: []result.Point{pt("rate=1", 1, 80, false), pt("rate=16", 16, 1400, true)},
		SLOs: []result.SLO{
			{Name: "ttft p99 < 500ms @ rate=16", Point: "rate=16", Measured: 4200, Unit: "ms"},
			{Name: "error_rate <= 0.05", Point: "rate=1", Measured: 0.01, Unit: "fraction", Pass: true},
		},
		Incomplete: true, Error: "stopped: context canceled",
	}
}

func TestTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "text", Points(sample())); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/table.golden", b.String())
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// A point's telemetry line says what a token cost in energy.
func TestNotesTelemetryEnergy(t *testing.T) {
	t.Parallel()
	p := result.Point{Telemetry: map[string]float64{"dcgm.power_mean_w": 800}, EnergyPerOutputToken: 0.4}
	var line string
	for _, n := range Notes(p) {
		if strings.HasPrefix(n, "telemetry: ") {
			line = n
		}
	}
	if line != "telemetry: dcgm.power_mean_w 800; 0.4 J per output token" {
		t.Errorf("telemetry line %q", line)
	}
}

// People read 11260, not 1.126e+04: a figure in a note is never in
// exponent form, at either end, and keeps its significant digits.
func TestPlain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v      float64
		digits int
		want   string
	}{
		{11260, 4, "11260"},
		{11263.4, 4, "11263"},
		{-2.5e6, 3, "-2500000"},
		{1126, 4, "1126"},
		{0.4321, 4, "0.4321"},
		{12, 4, "12"},
		{0, 4, "0"},
		{0.00001234, 4, "0.00001234"},
		{0.000012345, 3, "0.0000123"},
		{2.25, 3, "2.25"},
	} {
		if got := Plain(tc.v, tc.digits); got != tc.want {
			t.Errorf("Plain(%v, %d) = %q, want %q", tc.v, tc.digits, got, tc.want)
		}
	}
	p := result.Point{Server: map[string]float64{"prompt_tokens": 11260, "kv_cache_usage": 0.4321}}
	if n := Notes(p); len(n) != 1 || n[0] != "server: kv_cache_usage 0.4321, prompt_tokens 11260" {
		t.Errorf("server line %q", n)
	}
	if got := Figure(1234, "req/s"); got != "1234 req/s" {
		t.Errorf("Figure(1234, req/s) = %q", got)
	}
	if got := editNum(11130); got != "11130" {
		t.Errorf("a baseline edit's figure: editNum(11130) = %q", got)
	}
	if got := Num(0.00005); got != "0.00005" {
		t.Errorf("Num(0.00005) = %q", got)
	}
}

// At overload req/s (answers ended in the window) and out tok/s (tokens
// streamed in it) are what the server finished, well below the sent/s
// beside them; the row gets a note saying why, a steady point none, a
// short point's few straddling requests none, and a point whose median
// request outlasted the window none (the run's own note explains that).
func TestNotesOverload(t *testing.T) {
	t.Parallel()
	point := func(sent, reqs, toks, e2eMs, secs float64, saturation string, canceled int) result.Point {
		var p result.Point
		p.Schedule = result.Schedule{SendRate: sent, Saturation: saturation}
		p.Throughput = result.Throughput{Requests: reqs, OutputTokens: toks}
		p.Tokens = result.Tokens{Output: result.Summary{Count: 70, Mean: 128}}
		p.Requests = result.Requests{Canceled: canceled, Failed: 3}
		p.Window = result.Window{Seconds: secs}
		p.Latency = map[string]result.Summary{metric.E2E: lat(e2eMs, 2*e2eMs)}
		return p
	}
	find := func(p result.Point) string {
		for _, n := range Notes(p) {
			if strings.HasPrefix(n, "req/s ") {
				return n
			}
		}
		return ""
	}
	want := "req/s 2.25 counts answers that ended in the 30 s window; 12.00/s were sent and out tok/s 801 is 6.26 answers' worth: " +
		"past capacity, the rest queued or still streaming when it closed (40 cut short by the early stop, in neither)"
	if got := find(point(12, 2.25, 801, 9000, 30, "TTFT p50 grew past 10 s", 40)); got != want {
		t.Errorf("overloaded point's note:\n got %q\nwant %q", got, want)
	}
	// Sent no faster than answered, but long answers' tokens streamed in
	// the window ran well ahead of the answers that ended in it.
	want = "req/s 2.00 counts answers that ended in the 30 s window; 2.10/s were sent and out tok/s 801 is 6.26 answers' worth: long answers still streaming when it closed"
	if got := find(point(2.1, 2, 801, 9000, 30, "", 0)); got != want {
		t.Errorf("streaming point's note:\n got %q\nwant %q", got, want)
	}
	for name, p := range map[string]result.Point{
		"steady":                          point(10, 9.9, 9.9*128, 2000, 30, "", 0),
		"short, two requests straddling":  point(2, 1, 2.5*128, 900, 2, "", 0),
		"median request outlasted window": point(12, 2.25, 801, 40000, 30, "", 0),
	} {
		if got := find(p); got != "" {
			t.Errorf("%s point gets %q", name, got)
		}
	}
}

// ITL-COALESCED marks a point whose ITL left gaps out beyond the limit;
// gaps spread over their read are in ITL by its stated method and do not
// mark it, however many.
func TestFlagsITLCoalesced(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		gaps, kept, spread int
		want               bool
	}{
		{"none", 1000, 0, 0, false},
		{"most spread, few kept out", 1000, 10, 900, false},
		{"kept out beyond the limit", 1000, 11, 0, true},
		{"kept out and spread", 1000, 40, 900, true},
		{"a result from before spreading", 1000, 400, 0, true},
	} {
		var p result.Point
		p.Tokens = result.Tokens{ChunkGaps: tc.gaps, CoalescedGaps: tc.kept, SpreadGaps: tc.spread}
		if got := strings.Contains(Flags(p), "ITL-COALESCED"); got != tc.want {
			t.Errorf("%s: flags %q, want ITL-COALESCED %v", tc.name, Flags(p), tc.want)
		}
	}
}

// Sends held by the suite's own cap are said, without blaming the client;
// a client that fell behind is said as such, and nothing on schedule.
func TestNotesCapHeldSends(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    result.Schedule
		want string
	}{
		{"held by the suite's cap", result.Schedule{ScheduledRate: 10, SendRate: 4, CapWaits: 30},
			"the suite's max_concurrency held back 30 sends: the server, at that cap, took 4 of 10 req/s scheduled"},
		{"client behind", result.Schedule{ScheduledRate: 10, SendRate: 4, ClientSaturated: true, Reason: "sent 4.0 req/s of 10.0 scheduled"},
			"client could not keep the schedule: sent 4.0 req/s of 10.0 scheduled"},
		{"a few waits, on schedule", result.Schedule{ScheduledRate: 10, SendRate: 9.9, CapWaits: 2}, ""},
	} {
		var p result.Point
		p.Schedule = tc.s
		p.Validity = &result.Validity{Invalid: []string{"send lag P99 40 ms"}}
		got := ""
		for _, n := range Notes(p) {
			if strings.Contains(n, "max_concurrency") || strings.Contains(n, "schedule") {
				got = n
			}
		}
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: note %q, want one beginning %q", tc.name, got, tc.want)
		}
	}
}

// A flagged client whose trial still measured the server says the figures
// stand; an invalid one does not claim it.
func TestNotesFlaggedButValid(t *testing.T) {
	t.Parallel()
	var p result.Point
	p.Schedule = result.Schedule{ClientSaturated: true, Reason: "P99 send lag 18.1 ms exceeds 10 ms"}
	p.Validity = &result.Validity{}
	if n := strings.Join(Notes(p), "\n"); !strings.Contains(n, "18.1 ms exceeds 10 ms (within what voids a trial: the figures stand") {
		t.Errorf("valid trial: %q", n)
	}
	p.Validity = &result.Validity{Invalid: []string{"send lag P99 40 ms (limit 25 ms)"}}
	if n := strings.Join(Notes(p), "\n"); strings.Contains(n, "figures stand") {
		t.Errorf("invalid trial: %q", n)
	}
}

// Each trial's SLO verdict names its trial when a run has several: four
// identical-looking "rate=4" lines read as a bug.
func TestSLOsNameTheirTrial(t *testing.T) {
	t.Parallel()
	slos := []result.SLO{
		{Name: "ttft p90 < 1s @ rate=4", Point: "rate=4", Trial: 1, Measured: 72.51, Unit: "ms", Pass: true},
		{Name: "ttft p90 < 1s @ rate=4", Point: "rate=4", Trial: 2, Measured: 127.9, Unit: "ms", Pass: true},
	}
	got := strings.Join(Points(&result.File{SLOs: slos}).Tables[0].Notes, "\n")
	for _, want := range []string{"[rate=4 trial 1: 72.51 ms]", "[rate=4 trial 2: 127.9 ms]"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	one := strings.Join(Points(&result.File{SLOs: slos[:1]}).Tables[0].Notes, "\n")
	if !strings.Contains(one, "[rate=4: 72.51 ms]") {
		t.Errorf("a single trial is named: %s", one)
	}
}

// A point that sent no measured request has no figures: its throughput
// (a warm-up's tokens ending in the window) reads "-", not "2".
func TestPointWithoutRequestsHasNoFigures(t *testing.T) {
	f := &result.File{Points: []result.Point{{Label: "concurrency=4", Mode: "concurrency", Concurrency: 4, Trial: 1,
		Measured: result.Measured{Throughput: result.Throughput{OutputTokens: 2, Requests: 0.1}}}}}
	var b strings.Builder
	if err := Write(&b, "text", Points(f)); err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "concurrency=4") && strings.Contains(l, " 1 ") {
			row = l
			break
		}
	}
	if fs := strings.Fields(row); len(fs) < 7 || fs[3] != "-" || fs[5] != "-" || fs[6] != "-" {
		t.Errorf("row %q: want err%%, req/s and out tok/s as -", row)
	}
}

// A simulated run says its figures are the simulator's, with the
// interval's bounds, and that its capacity has none; a run whose profile
// has no interval says nothing.
func TestSimulatedFiguresCarryTheirInterval(t *testing.T) {
	t.Parallel()
	iv := &result.SimInterval{Level: 0.8, Latency: [2]float64{0.76, 1.58}, Throughput: [2]float64{0.6, 1.08}, Basis: "sim check"}
	f := &result.File{Target: result.Target{Kind: "sim", Sim: &result.SimProfile{Name: "llama-3-8b@l40s-fp8", Interval: iv}}}
	if got := SimulatedNote(f); !strings.Contains(got, "not a measurement") || !strings.Contains(got, "×0.76–1.58 of a latency") || !strings.Contains(got, "×0.60–1.08 of a throughput, in 80% of cases") {
		t.Errorf("note %q", got)
	}
	if got := SimulatedNote(f); strings.Contains(got, "capacity") {
		t.Errorf("a run without a capacity search: note %q", got)
	}
	f.Capacity = &result.Capacity{Rate: 49, Bound: "bracketed"}
	if got := SimulatedNote(f); !strings.Contains(got, "the capacity has no interval: a server 1.58 times slower") {
		t.Errorf("a capacity search: note %q", got)
	}
	f.Target.Sim.Interval = nil
	if got := SimulatedNote(f); got != "" {
		t.Errorf("a profile without an interval: note %q", got)
	}
}
