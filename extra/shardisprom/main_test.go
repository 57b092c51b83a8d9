package shardisprom_test

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// The example runs against real redis-server processes started here, so
// that its body uses only the public API and reads like code to copy: it
// takes "host:port" addresses from redisAddrs. Without a redis-server on
// PATH (and without CI set), the example is skipped with a note instead of
// failing or exiting the test binary.

var (
	exampleOnce    sync.Once
	exampleServers []*redistest.Server
	exampleErr     error
)

// redisAddrs returns the addresses of n (at most 2) empty redis-servers.
// When they cannot be started it returns addresses nothing listens on, so
// the example fails by its output rather than by stopping the test binary.
func redisAddrs(n int) []string {
	exampleOnce.Do(func() {
		exampleServers, exampleErr = redistest.StartN(2, redistest.Options{})
	})
	if exampleErr != nil {
		fmt.Fprintln(os.Stderr, "example servers:", exampleErr)
	}
	addrs := make([]string, n)
	for i := range addrs {
		if exampleErr != nil {
			addrs[i] = fmt.Sprintf("127.0.0.1:%d", 1+i) // refused
			continue
		}
		if _, err := exampleServers[i].Do("FLUSHALL"); err != nil {
			fmt.Fprintln(os.Stderr, "example server:", err)
		}
		addrs[i] = exampleServers[i].Addr
	}
	return addrs
}

// TestMain skips the example when redis-server is not installed and CI is
// not set (under CI a missing server stays a failure), and stops the
// example's servers at the end.
func TestMain(m *testing.M) {
	if err := redistest.Available(); err != nil {
		if ci := os.Getenv("CI"); ci == "" || ci == "false" {
			fmt.Fprintf(os.Stderr, "%v: skipping the examples (install redis-server and redis-tools to run them)\n", err)
			if flag.Lookup("test.skip") != nil {
				_ = flag.Set("test.skip", "^Example")
			}
		}
	}
	code := m.Run()
	for _, s := range exampleServers {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop example server:", err)
		}
	}
	os.Exit(code)
}
