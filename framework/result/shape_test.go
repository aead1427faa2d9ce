package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/inputfile"
)

// The files benchci writes pass; shapes that decode into far more memory
// than their bytes are refused before decoding, by their bounds.
func TestCheckShape(t *testing.T) {
	committed, _ := filepath.Glob("../../baselines/*.json")
	more, _ := filepath.Glob("../../results/*.json")
	for _, f := range append(committed, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckShape(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	array := func(key string, n int) []byte {
		return []byte(`{"schema":"x","` + key + `":[` + strings.Repeat("{},", n-1) + `{}]}`)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" passes
	}{
		{"the most points", array("points", MaxPoints), ""},
		{"a point too many", array("points", MaxPoints+1), "more than the 5000 points"},
		{"the longest array", array("slices", MaxArrayElements), ""},
		{"an element too many", array("slices", MaxArrayElements+1), "more than the 131072 elements"},
		{"points spelled with an escape, as the decoder reads them", array(`point\u0073`, MaxPoints+1), "5000 points"},
		{"points in capitals, as the decoder matches them", array("Points", MaxPoints+1), "5000 points"},
		{"another key with an escape", array(`slice\u0073`, MaxPoints+1), ""},
		{"an object of too many members", []byte(`{"models":{` + strings.Repeat(`"m":{},`, MaxArrayElements) + `"m":{}}}`), "members in an object"},
		{"commas in strings are not elements", []byte(`{"points":["` + strings.Repeat(",", 2*MaxPoints) + `"]}`), ""},
		{"an escaped quote does not end a string", []byte(`{"a":"\"[[[","points":[1]}`), ""},
		{"nesting", []byte(strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)), ""},
		{"nested too deep", []byte(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)), "nested deeper than " + fmt.Sprint(maxDepth)},
		{"too many objects", []byte(`[` + strings.Repeat(`[{},{},{},{}],`, MaxContainers/5+1) + `[]]`), "objects and arrays"},
		{"an unterminated string", []byte(`{"points":["`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckShape(tc.data)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckShape = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, inputfile.ErrTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckShape = %v, want ErrTooLarge saying %q", err, tc.want)
			}
		})
	}
	// The reader says so before decoding.
	if _, err := Parse(array("points", MaxPoints+1)); !errors.Is(err, inputfile.ErrTooLarge) {
		t.Errorf("Parse = %v", err)
	}
}

// FuzzCheckShape holds the scanner to the decoder's tokens of the same
// JSON: it refuses exactly the documents past a bound.
func FuzzCheckShape(f *testing.F) {
	for _, s := range []string{`{}`, `{"points":[{},{}]}`, `[[[]]]`, `{"a":"\"]","b":[1,2,{"points":[3]}]}`, `"x"`, `[1,"a,b",[2,3]]`, `{"a":[],"a":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckShape(data)
		if !json.Valid(data) {
			return // only the decoder's errors matter there
		}
		s, ok := countShape(data)
		if !ok {
			return
		}
		over := s.depth > maxDepth || s.containers > MaxContainers || s.maxArray > MaxArrayElements || s.maxMembers > MaxArrayElements || s.points > MaxPoints
		if over != (err != nil) {
			t.Fatalf("CheckShape(%q) = %v; tokens: depth %d, %d containers, longest array %d, most members %d, points %d", data, err, s.depth, s.containers, s.maxArray, s.maxMembers, s.points)
		}
	})
}

type shapeCount struct{ depth, containers, maxArray, maxMembers, points int }

// countShape counts data's containers from the decoder's tokens, which
// keep duplicate keys (a decoded map would drop them).
func countShape(data []byte) (shapeCount, bool) {
	var s shapeCount
	type open struct {
		array bool
		n     int
		key   string
	}
	var stack []open
	var key string // the last key of the enclosing object
	dec := json.NewDecoder(bytes.NewReader(data))
	expectKey := func() bool { return len(stack) > 0 && !stack[len(stack)-1].array && stack[len(stack)-1].n%2 == 0 }
	for {
		tok, err := dec.Token()
		if err != nil {
			return s, err.Error() == "EOF"
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if l.array {
				s.maxArray = max(s.maxArray, l.n)
				if strings.EqualFold(l.key, "points") {
					s.points = max(s.points, l.n)
				}
			} else {
				s.maxMembers = max(s.maxMembers, l.n/2)
			}
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		if k, ok := tok.(string); ok && expectKey() {
			key = k
			stack[len(stack)-1].n++
			continue
		}
		if d, ok := tok.(json.Delim); ok {
			s.containers++
			k := ""
			if len(stack) > 0 && !stack[len(stack)-1].array {
				k = key
			}
			stack = append(stack, open{array: d == '[', key: k})
			s.depth = max(s.depth, len(stack))
			continue
		}
		if len(stack) > 0 {
			stack[len(stack)-1].n++
		}
	}
}
