// Package testnet gives tests loopback addresses for servers they launch.
package testnet

import "testing"

// Addr returns a 127.0.0.1 address nothing listens on, for a server the test
// starts later (often in another process). Picking a port by listening on :0
// and closing it leaves a window in which a parallel test's own :0 listener
// can take the same port; where the platform allows, Addr keeps the port
// reserved until the test ends (see reserve).
func Addr(t testing.TB) string {
	t.Helper()
	addr, release, err := reserve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return addr
}
