package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/benchci/benchci/framework/internal/words"
	"github.com/benchci/benchci/framework/suite"
)

// Dataset is a list of recorded prompts.
type Dataset struct {
	Entries []DatasetEntry
}

// DatasetEntry is one prompt. OutputTokens 0 means "not recorded".
type DatasetEntry struct {
	System       string
	Prompt       string
	OutputTokens int
}

// LoadDataset reads a dataset file of the given kind ("sharegpt", "jsonl").
func LoadDataset(kind suite.PromptKind, path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load dataset: %w", err)
	}
	defer f.Close()
	var d *Dataset
	switch kind {
	case suite.PromptShareGPT:
		d, err = ParseShareGPT(f)
	case suite.PromptJSONL:
		d, err = ParseJSONL(f)
	default:
		return nil, fmt.Errorf("load dataset %s: unknown kind %q", path, kind)
	}
	if err != nil {
		return nil, fmt.Errorf("load dataset %w", atFile(path, err))
	}
	return d, nil
}

// ParseShareGPT reads the ShareGPT format: a JSON array of
// {"conversations": [{"from": "human", "value": ...}, {"from": "gpt", ...}]}.
// Like vLLM's benchmark, each conversation gives its first human turn as the
// prompt and the length of the reply to it as the output length;
// conversations without such a pair are skipped. Output lengths are
// counted in words, an estimate of tokens.
func ParseShareGPT(r io.Reader) (*Dataset, error) {
	var convs []struct {
		Conversations []struct {
			From  string `json:"from"`
			Value string `json:"value"`
		} `json:"conversations"`
	}
	if err := json.NewDecoder(r).Decode(&convs); err != nil {
		return nil, fmt.Errorf(" not a ShareGPT JSON array: %v", err)
	}
	d := &Dataset{}
	for _, c := range convs {
		for i := 0; i+1 < len(c.Conversations); i++ {
			q, a := c.Conversations[i], c.Conversations[i+1]
			if q.From == "human" && a.From == "gpt" && strings.TrimSpace(q.Value) != "" {
				d.Entries = append(d.Entries, DatasetEntry{Prompt: q.Value, OutputTokens: max(words.Count(a.Value), 1)})
				break
			}
		}
	}
	if len(d.Entries) == 0 {
		return nil, fmt.Errorf(" no conversation with a human turn answered by gpt")
	}
	return d, nil
}

// ParseJSONL reads {"prompt": ..., "system": ..., "output_tokens": n} lines;
// only prompt is required. Errors name the line.
func ParseJSONL(r io.Reader) (*Dataset, error) {
	d := &Dataset{}
	err := eachLine(r, func(b []byte) error {
		var e struct {
			Prompt       string `json:"prompt"`
			System       string `json:"system"`
			OutputTokens int    `json:"output_tokens"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return err
		}
		if strings.TrimSpace(e.Prompt) == "" {
			return fmt.Errorf("prompt is empty")
		}
		if e.OutputTokens < 0 {
			return fmt.Errorf("output_tokens is negative")
		}
		d.Entries = append(d.Entries, DatasetEntry{System: e.System, Prompt: e.Prompt, OutputTokens: e.OutputTokens})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(d.Entries) == 0 {
		return nil, fmt.Errorf(" no entries")
	}
	return d, nil
}
