package sim

import (
	"bufio"
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// Published datasets whose rows (Reference.Dataset) draw each request's
// lengths from the dataset's shape. A source that states only the means
// of a dataset's lengths still ran the dataset: a burst of its requests
// ends when its longest do, and its long requests decode in a batch that
// shrinks as the short ones end, which fixed lengths at the means do not
// show.
const datasetShareGPT = "sharegpt"

// datasetNames are the datasets as tables print them.
var datasetNames = map[string]string{datasetShareGPT: "ShareGPT"}

//go:embed datasets/sharegpt.txt
var shareGPTLengths string

// lengthPairs is a dataset's (prompt, output) token pairs and their means.
type lengthPairs struct {
	pairs                  [][2]int
	meanPrompt, meanOutput float64
}

// maxDatasetTokens bounds one length in a dataset file: vLLM's sampler
// keeps prompt and completion under 2,048 together.
const maxDatasetTokens = 2048

var datasetPairs = sync.OnceValues(func() (map[string]lengthPairs, error) {
	p, err := parseLengthPairs(shareGPTLengths)
	if err != nil {
		return nil, fmt.Errorf("datasets/sharegpt.txt: %w", err)
	}
	return map[string]lengthPairs{datasetShareGPT: p}, nil
})

// parseLengthPairs reads a dataset file: '#' comment lines, then one
// "prompt output" pair of positive token counts a line.
func parseLengthPairs(text string) (lengthPairs, error) {
	var out lengthPairs
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Fields(t)
		if len(f) != 2 {
			return lengthPairs{}, fmt.Errorf("line %d: want two token counts, got %q", line, t)
		}
		var pair [2]int
		for i, s := range f {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > maxDatasetTokens {
				return lengthPairs{}, fmt.Errorf("line %d: token count %q: want a whole number from 1 to %d", line, s, maxDatasetTokens)
			}
			pair[i] = n
		}
		out.pairs = append(out.pairs, pair)
		out.meanPrompt += float64(pair[0])
		out.meanOutput += float64(pair[1])
	}
	if err := sc.Err(); err != nil {
		return lengthPairs{}, err
	}
	if len(out.pairs) == 0 {
		return lengthPairs{}, fmt.Errorf("no length pairs")
	}
	out.meanPrompt /= float64(len(out.pairs))
	out.meanOutput /= float64(len(out.pairs))
	return out, nil
}

// sampler draws a row's requests as benchmark_serving.py samples a
// dataset: its pairs in a random order, none twice until all are drawn
// (then a new order), each scaled so the dataset's means become in and
// out. Drawing without replacement, 500 requests of 879 pairs hold the
// dataset's shape closer than 500 independent draws would.
func (l lengthPairs) sampler(in, out int) func(*rand.Rand) (int, int) {
	scale := func(n int, mean float64, want int) int {
		return max(1, int(math.Round(float64(n)*float64(want)/mean)))
	}
	var order []int
	return func(rng *rand.Rand) (int, int) {
		if len(order) == 0 {
			order = rng.Perm(len(l.pairs))
		}
		p := l.pairs[order[0]]
		order = order[1:]
		return scale(p[0], l.meanPrompt, in), scale(p[1], l.meanOutput, out)
	}
}

// rowLengths is how a row's requests are drawn: its dataset's shape at
// its means, or Input/Output every time. A dataset's draws have a state:
// each run takes its own.
func rowLengths(r Reference) (func(*rand.Rand) (int, int), error) {
	if r.Dataset == "" {
		return func(*rand.Rand) (int, int) { return r.Input, r.Output }, nil
	}
	all, err := datasetPairs()
	if err != nil {
		return nil, err
	}
	l, ok := all[r.Dataset]
	if !ok {
		return nil, fmt.Errorf("unknown dataset %q", r.Dataset)
	}
	return l.sampler(r.Input, r.Output), nil
}
