package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"strings"
	"testing"
	"time"
)

func jpegURL(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestImageTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ w, h, want int }{
		{1024, 768, 37*27 + 2}, // 1036 x 756 after rounding to 28s
		{28, 28, 2*2 + 2},      // at least 56 a side
		{8192, 8192, 16384 + 2},
		{448, 448, 16*16 + 2},
	} {
		if got := ImageTokens(tc.w, tc.h); got != tc.want {
			t.Errorf("%dx%d: %d tokens, want %d", tc.w, tc.h, got, tc.want)
		}
	}
}

// An image in a chat message is parsed and charged by ImageTokens: the
// usage counts its tokens, and its prefill makes the first token later by
// their cost.
func TestServerChargesImages(t *testing.T) {
	t.Parallel()
	p := Profile{Name: "img", Model: "m", MaxNumSeqs: 8, MaxBatchedTokens: 1 << 16, StepBase: time.Millisecond,
		PrefillPerToken: 100 * time.Microsecond, TokensPerStep: 1, ChatTemplateTokens: 5, MaxModelLen: 1 << 16}
	// The engine's steps are recorded, not slept: each request here is
	// one step (its prefill), priced by the profile.
	srv := New(p)
	clk := useFakeClock(srv.cl.prefill[0])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := srv.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ask := func(content string) int {
		code, body := post(t, u+"/v1/chat/completions", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":`+content+`}]}`)
		if code != 200 {
			t.Fatalf("HTTP %d: %s", code, body)
		}
		var r struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return r.Usage.PromptTokens
	}
	plain := ask(`"describe this"`)
	img := jpegURL(t, 1024, 768)
	withImage := ask(fmt.Sprintf(`[{"type":"text","text":"describe this"},{"type":"image_url","image_url":{"url":%q}}]`, img))
	if withImage-plain != ImageTokens(1024, 768) {
		t.Errorf("prompt tokens %d with the image, %d without: want %d more", withImage, plain, ImageTokens(1024, 768))
	}
	clk.mu.Lock()
	steps := append([]time.Duration(nil), clk.steps...)
	clk.mu.Unlock()
	if len(steps) != 2 || steps[1]-steps[0] != time.Duration(ImageTokens(1024, 768))*p.PrefillPerToken {
		t.Errorf("prefill steps %v: the image should add %d tokens x %v", steps, ImageTokens(1024, 768), p.PrefillPerToken)
	}
	code, body := post(t, u+"/v1/chat/completions", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}]}`)
	if code != 400 || !strings.Contains(body, "data URLs") {
		t.Errorf("a remote image: HTTP %d %s", code, body)
	}
}
