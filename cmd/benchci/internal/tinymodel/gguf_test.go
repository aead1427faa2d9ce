package tinymodel

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestHeader reads back the start of the file: magic, version, counts, and
// that the whole is a multiple of the alignment.
func TestHeader(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Write(&b, Default); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if string(data[:4]) != "GGUF" || binary.LittleEndian.Uint32(data[4:]) != 3 {
		t.Fatalf("header %q", data[:8])
	}
	tensors := binary.LittleEndian.Uint64(data[8:])
	kvs := binary.LittleEndian.Uint64(data[16:])
	if tensors != uint64(3+9*Default.Layers) || kvs != 21 {
		t.Errorf("%d tensors, %d metadata keys", tensors, kvs)
	}
	if len(data)%alignment != 0 {
		t.Errorf("size %d is not aligned", len(data))
	}
	// Deterministic: the same seed writes the same bytes.
	var again bytes.Buffer
	Write(&again, Default)
	if !bytes.Equal(data, again.Bytes()) {
		t.Error("two writes differ")
	}
}
