// Package fdlimit derives how many connections this process may hold open
// from its descriptor limit.
package fdlimit

// Reserve is the descriptors kept back from connections: files, pipes to
// a launched server, the /metrics sampler, the results being written.
const Reserve = 256

// minConns is the least cap given, however low the limit: below it a
// point could not load a server at all, and its failures say why.
const minConns = 16

// MaxConns returns how many connections may be open at once without
// running out of descriptors, and the limit it came from; 0, 0 when the
// platform does not say. The Go runtime has already raised the soft limit
// to the hard one at start (Linux and BSDs, since Go 1.19), so what is
// read here is what the process can have.
func MaxConns() (conns, limit int) {
	l := soft()
	return ForLimit(l), l
}

// ForLimit is MaxConns for a descriptor limit (0: unknown, no cap).
func ForLimit(limit int) int {
	if limit <= 0 {
		return 0
	}
	return max(limit-Reserve, minConns)
}
