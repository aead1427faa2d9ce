// tool-calls: an agent's function calling. Every request forces a call of
// one function whose parameters are a JSON Schema (tools + tool_choice, as
// vLLM's guided decoding serves them); benchci times the first tool-call
// delta (ttft_tool) and checks every call's arguments against the schema,
// reporting the share that parse and match (structured_correct_rate)
// beside the speed figures, with an SLO on it. kind: 'json_schema' sends
// the schema as response_format instead and checks the answer's text. The
// simulator here spoils 2% of its answers on purpose, so the check has
// something to find.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'tool-calls',
  description: 'Forced function calls, checked against their schema',
  target: b.target.sim('llama-3-8b@h100-sxm', faults={ wrong_structured_rate: 0.02 }),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=400, sigma=0.4, min=32, max=2048),
    output_tokens: b.dist.fixed(256),
    structured: {
      kind: 'tool_call',
      name: 'search_flights',
      schema: {
        type: 'object',
        properties: {
          origin: { type: 'string', minLength: 3 },
          destination: { type: 'string', minLength: 3 },
          date: { type: 'string' },
          passengers: { type: 'integer', minimum: 1 },
          cabin: { enum: ['economy', 'business', 'first'] },
        },
        required: ['origin', 'destination', 'date', 'passengers'],
        additionalProperties: false,
      },
    },
    seed: 13,
  },
  sweep: b.sweep.rates([4, 8], duration='20s', warmup='3s'),
  slos: [
    b.slo.p90('ttft_tool', '<', '300ms'),
    b.slo.rate('structured_correct_rate', '>=', 0.95),
  ],
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
