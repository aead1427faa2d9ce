package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
)

// SchemaV1 is the first results format. It differs from v2 only in the
// simulator profile, whose durations were bare integers of nanoseconds
// ("step_base": 18000000), now milliseconds named as such ("step_base_ms": 18).
const SchemaV1 = "benchci.result/v1"

// v1Durations maps v1's nanosecond fields to their v2 names.
var v1Durations = map[string]string{
	"step_base":         "step_base_ms",
	"decode_per_seq":    "decode_per_seq_ms",
	"prefill_per_token": "prefill_per_token_ms",
}

// migrateV1 rewrites a v1 results file as v2. It works on the JSON tree,
// keeping every number as written, so nothing but the renamed fields moves.
func migrateV1(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	doc["schema"] = Schema
	if t, ok := doc["target"].(map[string]any); ok {
		if p, ok := t["sim_profile"].(map[string]any); ok {
			for old, name := range v1Durations {
				v, ok := p[old]
				if !ok {
					continue
				}
				n, ok := v.(json.Number)
				if !ok {
					return nil, fmt.Errorf("target.sim_profile.%s: want nanoseconds, got %v", old, v)
				}
				ns, ok := new(big.Rat).SetString(n.String())
				if !ok {
					return nil, fmt.Errorf("target.sim_profile.%s: bad number %s", old, n)
				}
				ms, _ := ns.Quo(ns, big.NewRat(1e6, 1)).Float64()
				delete(p, old)
				p[name] = ms
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
