// Package leaktest checks, in tests against real servers, that a closed
// client leaves nothing behind: no goroutine running the module's code
// and no connection open on the servers.
//
// Take a Snapshot before the client is created, name its connections
// (pool.Options.ClientName), and call WaitTB once it is closed.
package leaktest

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// Snapshot returns the stacks of the running goroutines by id.
func Snapshot() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		id, _, _ := strings.Cut(strings.TrimPrefix(header, "goroutine "), " ")
		out[id] = g
	}
	return out
}

// NewGoroutines returns the stacks of the goroutines that are not in
// before and run code of the module (the library or an integration
// under extra/), leaving out the tests' own and the server harness's.
func NewGoroutines(before map[string]string) []string {
	var out []string
	for id, g := range Snapshot() {
		if _, ok := before[id]; ok || strings.Contains(g, "testing.tRunner") {
			continue
		}
		if strings.Contains(g, "github.com/shardis/shardis/") && !strings.Contains(g, "internal/redistest") {
			out = append(out, g)
		}
	}
	return out
}

// ClientsNamed counts the connections named name (CLIENT SETNAME) on
// servers.
func ClientsNamed(tb testing.TB, servers []*redistest.Server, name string) int {
	tb.Helper()
	n := 0
	for _, s := range servers {
		list, err := s.Do("CLIENT", "LIST")
		if err != nil {
			tb.Fatalf("CLIENT LIST on %s: %v", s.Addr, err)
		}
		n += strings.Count(list, "name="+name+" ")
	}
	return n
}

// WaitTB waits, at most 15 s, until no goroutine started since before
// runs the module's code and no connection named name is left on
// servers, and fails tb with what is left otherwise.
func WaitTB(tb testing.TB, before map[string]string, servers []*redistest.Server, name string) {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := NewGoroutines(before)
		conns := ClientsNamed(tb, servers, name)
		if len(left) == 0 && conns == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("left after Close: %d connections, %d goroutines:\n%s", conns, len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
