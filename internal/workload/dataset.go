package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/words"
)

// Bounds on a dataset, which a run holds whole: its prompts' text and its
// entries. A file past them is refused at the entry that passed them; a
// run and `benchci validate` apply the same.
const (
	// MaxDatasetText bounds the text a dataset keeps (system prompts and
	// prompts; a ShareGPT file keeps only each conversation's first
	// question): 128 MiB, ShareGPT V3's first questions several times.
	MaxDatasetText = 128 << 20
	// MaxDatasetEntries bounds its prompts (40 bytes each as held).
	MaxDatasetEntries = 2_000_000
	// maxConversation bounds one ShareGPT conversation's JSON.
	maxConversation = 64 << 20
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

// LoadDataset reads a dataset file of the given kind ("sharegpt",
// "jsonl"), a regular file of at most suite.MaxDataFile bytes.
func LoadDataset(kind suite.PromptKind, path string) (*Dataset, error) {
	d := &Dataset{}
	if err := scanDatasetFile(kind, path, d.add); err != nil {
		return nil, err
	}
	return d, nil
}

// CheckDataset reads a dataset file as LoadDataset does, with the same
// bounds and errors, keeping none of it: its memory does not grow with
// the file. With needOutput, an entry that records no output length is
// an error (the workload has no output_tokens to fill it in).
func CheckDataset(kind suite.PromptKind, path string, needOutput bool) error {
	return scanDatasetFile(kind, path, func(e DatasetEntry) error {
		if needOutput && e.OutputTokens == 0 {
			return errNoOutput
		}
		return nil
	})
}

// errNoOutput is a dataset entry's without the output length the
// workload needs.
var errNoOutput = errors.New("records no output length; set workload.output_tokens")

func (d *Dataset) add(e DatasetEntry) error {
	if n := len(d.Entries); n > 0 && e.System != "" && d.Entries[n-1].System == e.System {
		e.System = d.Entries[n-1].System // one copy of a system prompt lines share
	}
	d.Entries = append(d.Entries, e)
	return nil
}

func scanDatasetFile(kind suite.PromptKind, path string, f func(DatasetEntry) error) error {
	file, err := inputfile.Open(path, suite.MaxDataFile)
	if err != nil {
		return fmt.Errorf("load dataset: %w", err)
	}
	defer file.Close()
	switch kind {
	case suite.PromptShareGPT:
		err = scanShareGPT(file, f)
	case suite.PromptJSONL:
		err = scanJSONL(file, f)
	default:
		return fmt.Errorf("load dataset %s: unknown kind %q", path, kind)
	}
	if err != nil {
		return fmt.Errorf("load dataset %w", atFile(path, err))
	}
	return nil
}

// datasetBounds applies MaxDatasetEntries and MaxDatasetText.
type datasetBounds struct {
	entries int
	text    int64
}

func (b *datasetBounds) check(e DatasetEntry) error {
	b.entries++
	b.text += int64(len(e.System) + len(e.Prompt))
	switch {
	case b.entries > MaxDatasetEntries:
		return stop{fmt.Errorf("more than the %d prompts a dataset may have", MaxDatasetEntries)}
	case b.text > MaxDatasetText:
		return stop{fmt.Errorf("more than the %s of prompt text a dataset may hold", inputfile.Size(MaxDatasetText))}
	}
	return nil
}

// ParseShareGPT reads the ShareGPT format: a JSON array of
// {"conversations": [{"from": "human", "value": ...}, {"from": "gpt", ...}]}.
// Like vLLM's benchmark, each conversation gives its first human turn as the
// prompt and the length of the reply to it as the output length;
// conversations without such a pair are skipped. Output lengths are
// counted in words, an estimate of tokens. The array is read a
// conversation at a time, and only the prompt is kept.
func ParseShareGPT(r io.Reader) (*Dataset, error) {
	d := &Dataset{}
	if err := scanShareGPT(r, d.add); err != nil {
		return nil, err
	}
	return d, nil
}

// perValue is a reader whose limit is set afresh before each value a
// decoder reads from it, so that one value cannot be larger than left.
type perValue struct {
	r    io.Reader
	left int64
}

var errValueTooLarge = errors.New("too large")

func (p *perValue) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, errValueTooLarge
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, err := p.r.Read(b)
	p.left -= int64(n)
	return n, err
}

func scanShareGPT(r io.Reader, f func(DatasetEntry) error) error {
	pv := &perValue{r: r, left: maxConversation}
	dec := json.NewDecoder(pv)
	notArray := func(err error) error { return fmt.Errorf(" not a ShareGPT JSON array: %v", err) }
	if tok, err := dec.Token(); err != nil {
		return notArray(err)
	} else if tok != json.Delim('[') {
		return notArray(fmt.Errorf("begins with %v", tok))
	}
	var b datasetBounds
	for i := 1; dec.More(); i++ {
		var conv struct {
			Conversations []struct {
				From  string `json:"from"`
				Value string `json:"value"`
			} `json:"conversations"`
		}
		pv.left = maxConversation
		if err := dec.Decode(&conv); err != nil {
			if errors.Is(err, errValueTooLarge) {
				return fmt.Errorf(" conversation %d is more than %s of JSON", i, inputfile.Size(maxConversation))
			}
			return notArray(fmt.Errorf("conversation %d: %v", i, err))
		}
		c := conv.Conversations
		for k := 0; k+1 < len(c); k++ {
			q, a := c[k], c[k+1]
			if q.From == "human" && a.From == "gpt" && strings.TrimSpace(q.Value) != "" {
				e := DatasetEntry{Prompt: q.Value, OutputTokens: max(words.Count(a.Value), 1)}
				if e.OutputTokens > suite.MaxTokens {
					return fmt.Errorf(" conversation %d: a reply of %d words is beyond any model's context (at most %d tokens)", i, e.OutputTokens, suite.MaxTokens)
				}
				if err := b.check(e); err != nil {
					return fmt.Errorf(" conversation %d: %v", i, err)
				}
				if err := f(e); err != nil {
					return fmt.Errorf(" conversation %d: %v", i, err)
				}
				break
			}
		}
	}
	pv.left = maxConversation
	if _, err := dec.Token(); err != nil {
		return notArray(err)
	}
	if b.entries == 0 {
		return fmt.Errorf(" no conversation with a human turn answered by gpt")
	}
	return nil
}

// ParseJSONL reads {"prompt": ..., "system": ..., "output_tokens": n} lines;
// only prompt is required. Errors name the line.
func ParseJSONL(r io.Reader) (*Dataset, error) {
	d := &Dataset{}
	if err := scanJSONL(r, d.add); err != nil {
		return nil, err
	}
	return d, nil
}

func scanJSONL(r io.Reader, f func(DatasetEntry) error) error {
	var b datasetBounds
	err := eachLine(r, maxPromptLine, func(line []byte) error {
		var e struct {
			Prompt       string `json:"prompt"`
			System       string `json:"system"`
			OutputTokens int    `json:"output_tokens"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
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
		if e.OutputTokens > suite.MaxTokens {
			return fmt.Errorf("output_tokens %d is beyond any model's context (at most %d)", e.OutputTokens, suite.MaxTokens)
		}
		de := DatasetEntry{System: e.System, Prompt: e.Prompt, OutputTokens: e.OutputTokens}
		if err := b.check(de); err != nil {
			return err
		}
		return f(de)
	})
	if err != nil {
		return err
	}
	if b.entries == 0 {
		return fmt.Errorf(" no entries")
	}
	return nil
}
