// Package tokenizer counts tokens offline, for servers that report no
// usage: "words" (whitespace-separated words, the simulator's tokenizer) or
// a tiktoken encoding (cl100k_base, o200k_base, p50k_base, r50k_base) whose
// BPE ranks are embedded in the binary, so nothing is downloaded.
package tokenizer

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/benchci/benchci/internal/words"
)

// Names lists the known tokenizers.
var Names = []string{"words", "cl100k_base", "o200k_base", "p50k_base", "r50k_base"}

// Tokenizer counts tokens in text; it satisfies client.Counter.
type Tokenizer struct {
	enc *tiktoken.Tiktoken // nil: words
}

// Count returns the number of tokens in s.
func (t *Tokenizer) Count(s string) int {
	if t.enc == nil {
		return words.Count(s)
	}
	return len(t.enc.Encode(s, nil, nil))
}

var setLoader sync.Once

// Get returns the named tokenizer. Loading a BPE encoding takes ~0.1 s.
func Get(name string) (*Tokenizer, error) {
	if name == "words" {
		return &Tokenizer{}, nil
	}
	setLoader.Do(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w (known: %v)", name, err, Names)
	}
	return &Tokenizer{enc: enc}, nil
}
