package runner

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/benchci/benchci/internal/words"
)

// fakeChat is what the tests' fake OpenAI servers read of a chat request.
type fakeChat struct {
	Messages  []struct{ Content string } `json:"messages"`
	MaxTokens int                        `json:"max_tokens"`
}

// readFakeChat decodes a chat request's body, as far as the fakes need.
func readFakeChat(r *http.Request) fakeChat {
	var c fakeChat
	json.NewDecoder(r.Body).Decode(&c)
	return c
}

// promptTokens counts the prompt as the fakes' servers do: three tokens of
// chat template and a token a word.
func (c fakeChat) promptTokens() int {
	n := 3
	for _, m := range c.Messages {
		n += words.Count(m.Content)
	}
	return n
}

// streamTokens writes n chunks of one text token each.
func streamTokens(w io.Writer, n int) {
	for range n {
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":" tok"},"finish_reason":null}]}`+"\n\n")
	}
}
