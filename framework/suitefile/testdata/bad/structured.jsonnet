// Structured requests: a schema that does not compile, a function name
// with a space, and a share above 1.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'structured',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5),
    structured: { kind: 'tool_call', name: 'get weather', share: 1.5, schema: { type: 'object', properties: { n: { type: 'integr' } } } },
  },
  sweep: b.sweep.rates([4], duration='10s'),
}
