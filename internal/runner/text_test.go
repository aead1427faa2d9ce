package runner

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/workload"
)

// A virtual run hands the replay text requests instead of bodies; each
// must be admitted as its body would be (prompt and output tokens,
// refusals), turn by turn, and what a Text cannot say goes as a body.
func TestTextRequestsAdmitAsTheirBodies(t *testing.T) {
	t.Parallel()
	img := "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	turn := workload.Request{System: "be brief", Prompt: "one two three four", OutputTokens: 5,
		History: []client.Message{{Role: "user", Content: "earlier words"}, {Role: "assistant", Content: "an answer"}}}
	turn.FollowUps = []workload.Request{{Prompt: "and then", OutputTokens: 2}, {Prompt: "with a picture", Images: []string{img}, OutputTokens: 3}}
	cases := []struct {
		name  string
		opts  client.Options
		req   workload.Request
		texts []bool // whether each turn goes as a Text
	}{
		{"chat with a session", client.Options{API: client.Chat}, turn, []bool{true, true, false}},
		{"completions with a session", client.Options{API: client.Completions}, turn, []bool{true, true, false}},
		{"history with an image", client.Options{API: client.Chat},
			workload.Request{Prompt: "p", OutputTokens: 1, History: []client.Message{{Role: "user", Content: "look", Images: []string{img}}}}, []bool{false}},
		{"extra fields", client.Options{API: client.Chat, Extra: map[string]any{"temperature": 0}}, workload.Request{Prompt: "p q", OutputTokens: 4}, []bool{false}},
		{"refused", client.Options{API: client.Chat}, workload.Request{Prompt: "p", OutputTokens: 0}, []bool{true}},
	}
	p, _ := sim.Lookup("llama3-8b-h100")
	p.PrefixCaching = true
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Model = "m"
			cl, err := client.New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			asText, err := item(cl, c.req, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			asBody, err := item(cl, c.req, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			sameWords(t, asText, asBody)
			viaText, viaBody := admissions(t, p, asText), admissions(t, p, asBody)
			if len(viaText) != len(c.texts) {
				t.Fatalf("%d turns, want %d", len(viaText), len(c.texts))
			}
			for i, tx := range viaText {
				if tx.text != c.texts[i] {
					t.Errorf("turn %d went as a text: %v, want %v", i, tx.text, c.texts[i])
				}
				if bd := viaBody[i]; bd.text || tx.how != bd.how {
					t.Errorf("turn %d: admitted as %s; its body (text %v) as %s", i, tx.how, bd.text, bd.how)
				}
			}
		})
	}
}

type admission struct {
	text bool   // it went as a Text
	how  string // the admission, or the refusal
}

// admissions submits it and its follow-ups, each to a fresh replay, as
// a virtual run does.
func admissions(t *testing.T, p sim.Profile, it loadgen.Item) []admission {
	t.Helper()
	var out []admission
	for _, turn := range append([]loadgen.Item{it}, it.FollowUps...) {
		r, err := sim.NewReplay(p)
		if err != nil {
			t.Fatal(err)
		}
		var a sim.Admission
		if turn.Text != nil {
			a, err = r.SubmitRequest(sim.Request(*turn.Text), time.Unix(0, 0))
		} else {
			a, err = r.Submit(turn.Body, time.Unix(0, 0))
		}
		out = append(out, admission{turn.Text != nil, fmt.Sprintf("prompt %d, output %d, error %v", a.Prompt, a.Output, err)})
	}
	return out
}

// sameWords holds each turn's Text to its body word for word: the roles
// and texts of a chat's messages (which set the prefix cache's hashes,
// not only the counts), a completion's prompt, and max_tokens.
func sameWords(t *testing.T, asText, asBody loadgen.Item) {
	t.Helper()
	texts, bodies := append([]loadgen.Item{asText}, asText.FollowUps...), append([]loadgen.Item{asBody}, asBody.FollowUps...)
	for i, tx := range texts {
		if tx.Text == nil {
			continue
		}
		var b struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Prompt    string `json:"prompt"`
			MaxTokens int    `json:"max_tokens"`
		}
		if err := json.Unmarshal(bodies[i].Body, &b); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		var roles, words []string
		for _, m := range b.Messages {
			roles, words = append(roles, m.Role), append(words, m.Content)
		}
		if !tx.Text.Chat {
			words = []string{b.Prompt}
		}
		if !slices.Equal(tx.Text.Roles, roles) || !slices.Equal(tx.Text.Texts, words) || tx.Text.MaxTokens != b.MaxTokens {
			t.Errorf("turn %d: text %+v; its body says roles %q, texts %q, max_tokens %d", i, *tx.Text, roles, words, b.MaxTokens)
		}
	}
}
