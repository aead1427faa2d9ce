package suite

import "testing"

// FuzzDecode feeds arbitrary JSON to the decoder: it must return a suite or
// an error, never panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name":"x","target":{"kind":"sim","profile":"tiny"},"workload":{"input_tokens":{"kind":"fixed","value":1},"output_tokens":{"kind":"fixed","value":1}},"sweep":{"rates":[1]}}`))
	f.Add([]byte(`{"sweep":{"rates":[1,"x",null,{}]},"slos":[{"metric":"ttft","threshold":[]}],"tolerance":{"a":1}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"trials":1e300,"request":{"timeout":"-1s","extra":{"a":[1,{"b":2}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if (s == nil) == (err == nil) {
			t.Fatalf("Decode returned suite %v and error %v", s, err)
		}
	})
}
