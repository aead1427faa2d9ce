package suitefile

import (
	"strings"
	"testing"
)

// Every time a suite gives has a bound: a wait past it would not end in
// any CI job, and is refused at its field.
func TestTimesBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		field, want string
	}{
		{`request: { timeout: '100000h' }`, "request.timeout: 100000h0m0s is more than the 24h0m0s any wait may be"},
		{`target: b.target.launch(['x'], url='http://127.0.0.1:9', start_timeout='1000h')`, "launch.start_timeout: 1000h0m0s is more than the 2h0m0s"},
		{`target: b.target.launch(['x'], url='http://127.0.0.1:9', stop_grace='5h')`, "launch.stop_grace: 5h0m0s is more than the 10m0s"},
		{`telemetry: [{ name: 'dcgm', url: 'http://127.0.0.1:9400/metrics', interval: '2h' }]`, "telemetry[0].interval: must be 100ms to 1m, got 2h0m0s"},
	} {
		target := "target: b.target.sim('tiny'),"
		if strings.HasPrefix(tc.field, "target:") {
			target = ""
		}
		src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'bounds',
  ` + target + `
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([1], duration='1s'),
  ` + tc.field + `,
}`
		_, err := LoadSource("bounds.jsonnet", src, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.field, err, tc.want)
		}
	}
}
