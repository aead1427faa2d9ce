// Package tinymodel writes a tiny random-weight Llama model in GGUF, the
// format llama.cpp and Ollama load, so that tests can run a real inference
// engine without downloading a model. The model is nonsense by design: its
// weights are random; what matters is that the engine loads it, tokenizes,
// batches and streams like with any other model.
package tinymodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/benchci/benchci/internal/workload"
)

// Config sizes the model.
type Config struct {
	Embedding  int // width
	Layers     int
	Heads      int
	FFN        int
	ContextLen int
	Seed       uint64
}

// Default is small enough to run at thousands of tokens per second on a CPU.
var Default = Config{Embedding: 64, Layers: 2, Heads: 4, FFN: 128, ContextLen: 2048, Seed: 1}

// GGUF value types.
const (
	tUint32  = 4
	tInt32   = 5
	tFloat32 = 6
	tBool    = 7
	tString  = 8
	tArray   = 9
)

const alignment = 32

// vocab returns tokens, scores and types: <unk>, <s>, </s>, 256 byte
// tokens, the letters, then for every word of benchci's synthetic prompts
// the pieces "▁w", "▁wo", ... "▁word". SentencePiece merges adjacent
// pieces only into pieces that exist, so the prefixes make every prompt
// word reachable as a single token, as common English words are in real
// vocabularies; a word is then one token and prompt lengths can be hit
// exactly. wordTok marks the complete words, the only tokens the model
// emits.
func vocab() (toks []string, scores []float32, types []int32, wordTok []bool) {
	add := func(t string, typ int32, word bool) {
		toks = append(toks, t)
		types = append(types, typ)
		wordTok = append(wordTok, word)
	}
	add("<unk>", 2, false) // unknown
	add("<s>", 3, false)   // control
	add("</s>", 3, false)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), 6, false) // byte
	}
	seen := map[string]bool{}
	piece := func(p string, word bool) {
		if seen[p] {
			if word {
				for i, t := range toks {
					if t == p {
						wordTok[i] = true
					}
				}
			}
			return
		}
		seen[p] = true
		add(p, 1, word)
	}
	piece("▁", false)
	for c := 'a'; c <= 'z'; c++ {
		piece(string(c), false)
	}
	for _, w := range append(workload.Vocabulary(), "hello", "say") {
		for i := 1; i <= len(w); i++ {
			piece("▁"+w[:i], i == len(w))
		}
	}
	scores = make([]float32, len(toks))
	for i := range scores {
		scores[i] = float32(len(toks[i])) // longer pieces win merges
	}
	return toks, scores, types, wordTok
}

type writer struct {
	w   io.Writer
	err error
}

func (w *writer) put(v any) {
	if w.err == nil {
		w.err = binary.Write(w.w, binary.LittleEndian, v)
	}
}

func (w *writer) str(s string) {
	w.put(uint64(len(s)))
	if w.err == nil {
		_, w.err = io.WriteString(w.w, s)
	}
}

type tensor struct {
	name string
	dims []uint64 // innermost first, as GGUF stores them
	data []float32
}

// Write writes the model: the header (metadata, then the tensors' table),
// then the tensors' data.
func Write(out io.Writer, c Config) error {
	toks, scores, types, wordTok := vocab()
	ts := tensors(c, wordTok)
	head, err := header(c, ts, toks, scores, types)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(out)
	if _, err := bw.Write(head); err != nil {
		return err
	}
	// Every tensor starts aligned too.
	w := &writer{w: bw}
	for _, t := range ts {
		w.put(t.data)
		n := uint64(len(t.data)) * 4
		w.put(make([]byte, pad(n)-n))
	}
	if w.err != nil {
		return w.err
	}
	return bw.Flush()
}

// tensors draws the model's weights from c.Seed, in one fixed order so
// that a seed always writes the same bytes.
func tensors(c Config, wordTok []bool) []tensor {
	r := rand.New(rand.NewPCG(c.Seed, 2))
	nv, ne, nf := uint64(len(wordTok)), uint64(c.Embedding), uint64(c.FFN)
	mat := func(name string, cols, rows uint64, scale float64) tensor {
		d := make([]float32, cols*rows)
		for i := range d {
			d[i] = float32(r.NormFloat64() * scale)
		}
		return tensor{name, []uint64{cols, rows}, d}
	}
	ones := func(name string, n uint64) tensor {
		d := make([]float32, n)
		for i := range d {
			d[i] = 1
		}
		return tensor{name, []uint64{n}, d}
	}
	s := 1 / math.Sqrt(float64(ne))
	// Steer the random model to whole-word tokens and away from bytes and
	// </s>: every embedding carries +10 in dimension 0, which survives the
	// residual stream; the output norm keeps only that dimension, and the
	// output matrix reads it as +5 (with noise, for variety) for word
	// tokens and -5 for the rest. So the engine streams one word per token
	// and never stops before max_tokens, as ignore_eos would make it.
	embd := mat("token_embd.weight", ne, nv, 1)
	for row := range nv {
		embd.data[row*ne] = 10
	}
	norm := tensor{"output_norm.weight", []uint64{ne}, make([]float32, ne)}
	norm.data[0] = 1
	outW := tensor{"output.weight", []uint64{ne, nv}, make([]float32, ne*nv)}
	for row := range nv {
		v := float32(-5)
		if wordTok[row] {
			v = 5 + float32(r.NormFloat64()*0.5)
		}
		outW.data[row*ne] = v
	}
	ts := []tensor{embd, norm, outW}
	for l := range c.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			ones(p+"attn_norm.weight", ne),
			mat(p+"attn_q.weight", ne, ne, s), mat(p+"attn_k.weight", ne, ne, s),
			mat(p+"attn_v.weight", ne, ne, s), mat(p+"attn_output.weight", ne, ne, s),
			ones(p+"ffn_norm.weight", ne),
			mat(p+"ffn_gate.weight", ne, nf, s), mat(p+"ffn_up.weight", ne, nf, s),
			mat(p+"ffn_down.weight", nf, ne, 1/math.Sqrt(float64(nf))))
	}
	return ts
}

// header is the file's header, padded to the alignment. It is built in a
// buffer: the data section must start at an aligned offset, which needs
// the header's length.
func header(c Config, ts []tensor, toks []string, scores []float32, types []int32) ([]byte, error) {
	var head bytes.Buffer
	w := &writer{w: &head}
	w.put([4]byte{'G', 'G', 'U', 'F'})
	w.put(uint32(3))
	w.put(uint64(len(ts)))
	kvs := metadata(w, c, toks, scores, types)
	w.put(uint64(len(kvs)))
	for _, kv := range kvs {
		kv()
	}
	var off uint64
	for _, t := range ts {
		w.str(t.name)
		w.put(uint32(len(t.dims)))
		w.put(t.dims)
		w.put(uint32(0)) // F32
		w.put(off)
		off += pad(uint64(len(t.data)) * 4)
	}
	if w.err != nil {
		return nil, w.err
	}
	head.Write(make([]byte, pad(uint64(head.Len()))-uint64(head.Len())))
	return head.Bytes(), nil
}

// metadata is the header's key-value pairs, each a function writing its
// key, type and value to w: their count goes first.
func metadata(w *writer, c Config, toks []string, scores []float32, types []int32) []func() {
	nv, ne, nf := uint64(len(toks)), uint64(c.Embedding), uint64(c.FFN)
	return []func(){
		func() { w.str("general.architecture"); w.put(uint32(tString)); w.str("llama") },
		func() { w.str("general.name"); w.put(uint32(tString)); w.str("benchci-tiny") },
		func() { w.str("general.alignment"); w.put(uint32(tUint32)); w.put(uint32(alignment)) },
		func() { w.str("llama.context_length"); w.put(uint32(tUint32)); w.put(uint32(c.ContextLen)) },
		func() { w.str("llama.embedding_length"); w.put(uint32(tUint32)); w.put(uint32(ne)) },
		func() { w.str("llama.block_count"); w.put(uint32(tUint32)); w.put(uint32(c.Layers)) },
		func() { w.str("llama.feed_forward_length"); w.put(uint32(tUint32)); w.put(uint32(nf)) },
		func() { w.str("llama.attention.head_count"); w.put(uint32(tUint32)); w.put(uint32(c.Heads)) },
		func() { w.str("llama.attention.head_count_kv"); w.put(uint32(tUint32)); w.put(uint32(c.Heads)) },
		func() {
			w.str("llama.rope.dimension_count")
			w.put(uint32(tUint32))
			w.put(uint32(c.Embedding / c.Heads))
		},
		func() { w.str("llama.attention.layer_norm_rms_epsilon"); w.put(uint32(tFloat32)); w.put(float32(1e-5)) },
		func() { w.str("llama.vocab_size"); w.put(uint32(tUint32)); w.put(uint32(nv)) },
		func() { w.str("tokenizer.ggml.model"); w.put(uint32(tString)); w.str("llama") },
		func() {
			w.str("tokenizer.ggml.tokens")
			w.put(uint32(tArray))
			w.put(uint32(tString))
			w.put(uint64(len(toks)))
			for _, t := range toks {
				w.str(t)
			}
		},
		func() {
			w.str("tokenizer.ggml.scores")
			w.put(uint32(tArray))
			w.put(uint32(tFloat32))
			w.put(uint64(len(scores)))
			w.put(scores)
		},
		func() {
			w.str("tokenizer.ggml.token_type")
			w.put(uint32(tArray))
			w.put(uint32(tInt32))
			w.put(uint64(len(types)))
			w.put(types)
		},
		func() { w.str("tokenizer.ggml.unknown_token_id"); w.put(uint32(tUint32)); w.put(uint32(0)) },
		func() { w.str("tokenizer.ggml.bos_token_id"); w.put(uint32(tUint32)); w.put(uint32(1)) },
		func() { w.str("tokenizer.ggml.eos_token_id"); w.put(uint32(tUint32)); w.put(uint32(2)) },
		func() { w.str("tokenizer.ggml.add_bos_token"); w.put(uint32(tBool)); w.put(true) },
		func() { w.str("tokenizer.ggml.add_eos_token"); w.put(uint32(tBool)); w.put(false) },
	}
}

func pad(n uint64) uint64 { return (n + alignment - 1) / alignment * alignment }

// WriteFile writes the model to path.
func WriteFile(path string, c Config) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, c); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
