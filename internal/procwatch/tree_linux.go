//go:build linux

package procwatch

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Tree lists a server's processes: those below pid by their parent
// links in /proc (including children that started sessions of their own
// and so left the process group), and any process carrying the launch's
// marker in its environment (a daemonized grandchild, reparented to init,
// inherits it); "" marks none. A marker names one launch alone, so
// other processes, another launch's among them, are never listed.
func Tree(pid int, marker string) []int {
	children := map[int][]int{}
	var marked []int
	want := []byte(marker)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces: the
		// fields after the last ')' are "state ppid ...".
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
		if len(want) == 0 {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(env, want) {
			marked = append(marked, p)
		}
	}
	seen := map[int]bool{}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	for _, m := range marked {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
			walk(m)
		}
	}
	return out
}
