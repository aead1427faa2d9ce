package workload

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
)

func TestShareGPTMini(t *testing.T) {
	t.Parallel()
	d, err := LoadDataset("sharegpt", "../../suites/data/sharegpt-mini.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 12 {
		t.Fatalf("%d entries, want the 12 answered conversations", len(d.Entries))
	}
	if e := d.Entries[6]; e.Prompt != "Translate 'good morning, how are you' into Spanish." || e.OutputTokens != 4 {
		t.Errorf("entry 6 = %+v", e)
	}
	if _, err := ParseShareGPT(strings.NewReader(`{"not":"an array"}`)); err == nil {
		t.Error("an object accepted")
	}
	if _, err := ParseShareGPT(strings.NewReader(`[{"conversations":[{"from":"gpt","value":"x"}]}]`)); err == nil {
		t.Error("a dataset without usable conversations accepted")
	}
}

func TestParseJSONL(t *testing.T) {
	t.Parallel()
	d, err := LoadDataset("jsonl", "../../suites/data/prompts-mini.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Entries) != 6 || d.Entries[0].System == "" || d.Entries[0].OutputTokens == 0 {
		t.Errorf("entries %+v", d.Entries)
	}
	for in, want := range map[string]string{
		`{"prompt": "a"}` + "\n" + `{"promt": "b"}`: "2: json: unknown field",
		`{"prompt": ""}`:                       "1: prompt is empty",
		`{"prompt": "a", "output_tokens": -1}`: "1: output_tokens is negative",
		``:                                     "no entries",
	} {
		if _, err := ParseJSONL(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseJSONL(%q) error %v, want %q", in, err, want)
		}
	}
}

func FuzzParseJSONL(f *testing.F) {
	f.Add(`{"prompt": "a", "system": "s", "output_tokens": 3}` + "\n\n")
	f.Add(`{"prompt": "\u00e9"}`)
	f.Add(`{"prompt": "a", "output_tokens": 102400000}` + "\n" + `{"prompt": "b", "system": "s"}`)
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseJSONL(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, e := range d.Entries {
			if strings.TrimSpace(e.Prompt) == "" || e.OutputTokens < 0 || e.OutputTokens > suite.MaxTokens {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}

func FuzzParseShareGPT(f *testing.F) {
	f.Add(`[{"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a b"}]}]`)
	f.Add(`[{"conversations":null},{}]`)
	f.Add(`[{"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a"}]}] trailing`)
	f.Add(`{"conversations":[]}`)
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseShareGPT(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, e := range d.Entries {
			if strings.TrimSpace(e.Prompt) == "" || e.OutputTokens < 1 {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}

func TestGeneratorSources(t *testing.T) {
	t.Parallel()
	d, _ := LoadDataset("sharegpt", "../../suites/data/sharegpt-mini.json")
	w := suite.Workload{Prompts: suite.Prompts{Kind: "sharegpt"}, Seed: 3}
	g, err := NewGenerator(w, Sources{Dataset: d})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 12 {
		r := g.Next()
		if r.OutputTokens < 1 || r.InputTokens < 1 {
			t.Fatalf("request %+v", r)
		}
		seen[r.Prompt] = true
	}
	if len(seen) != 12 {
		t.Errorf("%d distinct prompts in the first 12 requests, want every entry once", len(seen))
	}

	// Shared prefixes: 3 system prompts of 100 tokens, chosen among, and
	// a suffix of its own; calibrated to 2 tokens per word with 10 of overhead.
	w = suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 50}, OutputTokens: suite.Dist{Kind: "fixed", Value: 5},
		Prompts: suite.Prompts{Kind: "shared_prefix", Prefixes: 3, PrefixTokens: 100}, Seed: 1}
	g, err = NewGenerator(w, Sources{Calibration: Calibration{Overhead: 10, TokensPerWord: 2}})
	if err != nil {
		t.Fatal(err)
	}
	systems := map[string]bool{}
	for range 60 {
		r := g.Next()
		systems[r.System] = true
		if n := len(strings.Fields(r.System)); n != 50 {
			t.Fatalf("system prompt of %d words, want 50 (100 tokens at 2 per word)", n)
		}
		if n := len(strings.Fields(r.Prompt)); n != 20 {
			t.Fatalf("user prompt of %d words, want 20 ((50-10)/2)", n)
		}
		if r.InputTokens != 150 {
			t.Fatalf("intended input %d, want 150", r.InputTokens)
		}
	}
	if len(systems) != 3 {
		t.Errorf("%d distinct system prompts, want 3", len(systems))
	}
	// A dataset without output lengths needs a distribution.
	if _, err := NewGenerator(suite.Workload{Prompts: suite.Prompts{Kind: "jsonl"}}, Sources{Dataset: &Dataset{Entries: []DatasetEntry{{Prompt: "x"}}}}); err == nil {
		t.Error("a dataset without output lengths and no output_tokens accepted")
	}
}

func TestGeneratorMultiTurn(t *testing.T) {
	t.Parallel()
	w := suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 10}, OutputTokens: suite.Dist{Kind: "fixed", Value: 20},
		Prompts: suite.Prompts{Kind: "multi_turn", Turns: 3, ThinkTime: suite.Duration(2 * time.Second)}, Seed: 1}
	g, err := NewGenerator(w, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	s := g.Next()
	if len(s.FollowUps) != 2 || s.Think != 2*time.Second || len(s.History) != 0 {
		t.Fatalf("session head %+v", s)
	}
	turns := append([]Request{s}, s.FollowUps...)
	for k, turn := range turns {
		// Turn k carries k user messages and k replies before its own.
		if len(turn.History) != 2*k {
			t.Errorf("turn %d has %d history messages, want %d", k, len(turn.History), 2*k)
		}
		// Its prompt is the whole history: k x (10 + 20) + 10 tokens.
		if want := 30*k + 10; turn.InputTokens != want {
			t.Errorf("turn %d input %d, want %d", k, turn.InputTokens, want)
		}
		for i, m := range turn.History {
			if want := []string{"user", "assistant"}[i%2]; m.Role != want {
				t.Errorf("turn %d history %d role %q", k, i, m.Role)
			}
		}
	}
	if turns[2].History[2].Content != turns[1].Prompt {
		t.Error("a later turn's history does not hold the earlier turn's prompt")
	}
	if g.Next().Index != 1 {
		t.Error("a session counts as one request of the sequence")
	}
}

// A session's images come with its first turn and stay in the history
// every later turn resends; the later turns add none of their own.
func TestGeneratorMultiTurnKeepsImagesInHistory(t *testing.T) {
	t.Parallel()
	w := suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 10}, OutputTokens: suite.Dist{Kind: "fixed", Value: 20},
		Prompts: suite.Prompts{Kind: "multi_turn", Turns: 3}, Seed: 1,
		Images: &suite.Images{Count: &suite.Dist{Kind: "fixed", Value: 2}, Format: "jpeg", Sizes: []suite.ImageSize{{Width: 32, Height: 32}}}}
	g, err := NewGenerator(w, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	s := g.Next()
	if len(s.Images) != 2 {
		t.Fatalf("first turn carries %d images, want 2", len(s.Images))
	}
	for k, turn := range s.FollowUps {
		if len(turn.Images) != 0 {
			t.Errorf("turn %d adds %d images of its own", k+1, len(turn.Images))
		}
		if !reflect.DeepEqual(turn.History[0].Images, s.Images) {
			t.Errorf("turn %d's history does not resend the first turn's images", k+1)
		}
		for i, m := range turn.History[1:] {
			if len(m.Images) != 0 {
				t.Errorf("turn %d history message %d carries images", k+1, i+1)
			}
		}
	}
}

// With images.turns 'every', each turn adds images of its own, as an agent
// sends a new screenshot a turn, and the history keeps every earlier turn's.
func TestGeneratorMultiTurnImagesEveryTurn(t *testing.T) {
	t.Parallel()
	w := suite.Workload{InputTokens: suite.Dist{Kind: "fixed", Value: 10}, OutputTokens: suite.Dist{Kind: "fixed", Value: 20},
		Prompts: suite.Prompts{Kind: "multi_turn", Turns: 3}, Seed: 1,
		Images: &suite.Images{Format: "png", Turns: suite.ImagesEveryTurn, Sizes: []suite.ImageSize{{Width: 32, Height: 32}, {Width: 48, Height: 32}}}}
	g, err := NewGenerator(w, Sources{})
	if err != nil {
		t.Fatal(err)
	}
	s := g.Next()
	turns := append([]Request{s}, s.FollowUps...)
	for k, turn := range turns {
		if len(turn.Images) != 1 {
			t.Errorf("turn %d adds %d images, want 1", k, len(turn.Images))
		}
		// The history holds each earlier turn's user message with its images.
		for j := 0; j < k; j++ {
			if !reflect.DeepEqual(turn.History[2*j].Images, turns[j].Images) {
				t.Errorf("turn %d's history lacks turn %d's images", k, j)
			}
		}
	}
}
