// Telemetry endpoints: a name that cannot prefix figures, a name used
// twice, an address without a scheme, and an interval too short.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'telemetry',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  telemetry: [
    b.telemetry.dcgm('http://127.0.0.1:9400/metrics', name='GPU metrics'),
    b.telemetry.dcgm('http://127.0.0.1:9400/metrics'),
    b.telemetry.dcgm('127.0.0.1:9400/metrics'),
    b.telemetry.prometheus('node', 'http://127.0.0.1:9100/metrics', ['node_load1'], interval='10ms'),
  ],
}
