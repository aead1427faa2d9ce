package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchci/benchci/internal/inputfile"
)

// Bounds on a results-format file's shape, checked before it is decoded:
// decoding makes a struct of each element, so an array of empty objects
// costs hundreds of times its bytes (a point is 784 bytes; "{}," is
// three), and a 32 MiB file of them took tens of GB before the count of
// points was ever checked. The files benchci writes hold about 4,000
// objects and arrays a MiB (histograms are long strings); a point's
// slices are at most 240.
const (
	// MaxContainers bounds the objects and arrays of a file, all
	// depths together.
	MaxContainers = 1 << 19
	// MaxArrayElements bounds one array (an empirical distribution of a
	// recorded suite holds at most 65,536 values), and the members of
	// one object (a map decodes a value of each).
	MaxArrayElements = 1 << 17
	// maxDepth bounds nesting (encoding/json's own limit is 10,000); a
	// suite's structured-output schema nests two levels a property.
	maxDepth = 512
)

// CheckShape refuses data whose arrays, objects or nesting exceed the
// bounds above, or whose "points" arrays (the key as the decoder matches
// it: unescaped, any case) hold more than MaxPoints, in one pass over its
// bytes that allocates nothing per element. It does not check that data
// is JSON: the decoder after it does.
func CheckShape(data []byte) error {
	type level struct {
		array, points bool
		n             int    // commas seen: elements, or members, less one
		key           []byte // the last string seen directly in an object
	}
	stack := make([]level, maxDepth)
	depth, containers := 0, 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			if depth > 0 && !stack[depth-1].array {
				stack[depth-1].key = data[i+1 : min(j, len(data))]
			}
			i = j
		case '{', '[':
			if depth == maxDepth {
				return fmt.Errorf("nested deeper than %d: %w", maxDepth, inputfile.ErrTooLarge)
			}
			if containers++; containers > MaxContainers {
				return fmt.Errorf("more than the %d objects and arrays a results file may hold: %w", MaxContainers, inputfile.ErrTooLarge)
			}
			points := c == '[' && depth > 0 && !stack[depth-1].array && isPoints(stack[depth-1].key)
			stack[depth] = level{array: c == '[', points: points}
			depth++
		case '}', ']':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				continue
			}
			l := &stack[depth-1]
			limit, what := MaxArrayElements, "elements in an array"
			switch {
			case !l.array:
				what = "members in an object"
			case l.points:
				limit, what = MaxPoints, "points"
			}
			// n commas: n+1 elements.
			if l.n++; l.n >= limit {
				return fmt.Errorf("more than the %d %s a results file may hold: %w", limit, what, inputfile.ErrTooLarge)
			}
		}
	}
	return nil
}

// isPoints reports whether a raw key decodes to "points" as the decoder
// matches field names: unescaped, in any case.
func isPoints(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return bytes.EqualFold(raw, []byte("points"))
	}
	var key string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	return json.Unmarshal(q, &key) == nil && strings.EqualFold(key, "points")
}
