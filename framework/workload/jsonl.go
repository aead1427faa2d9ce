package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// eachLine calls f with every non-blank line of a JSONL stream and its
// 1-based number. Lines may be up to 64 MiB (long prompts). An error from
// f is returned prefixed with the line number, as "12: msg".
func eachLine(r io.Reader, f func(line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := f(b); err != nil {
			return fmt.Errorf("%d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf(" %w", err)
	}
	return nil
}
