package reshard_test

import (
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/shardis/shardis/internal/redistest"
)

// The examples run against real redis-server processes started here, so
// their bodies use only the public API and read like code to copy: they
// take "host:port" addresses from redisAddrs. Without a redis-server on
// PATH (and without CI set), the examples are skipped with a note instead
// of failing or exiting the test binary.

// exampleServerCount is how many servers the examples share.
const exampleServerCount = 4

var (
	exampleOnce    sync.Once
	exampleServers []*redistest.Server
	exampleErr     error
)

// redisAddrs returns the addresses of n (at most exampleServerCount)
// empty redis-servers with no client connected. When they cannot be
// started it returns addresses nothing listens on, so the example fails
// by its output rather than by stopping the test binary.
func redisAddrs(n int) []string {
	exampleOnce.Do(func() {
		exampleServers, exampleErr = redistest.StartN(exampleServerCount, redistest.Options{})
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
		s := exampleServers[i]
		// No key, no fence marker, and no connection of an earlier
		// example that the client checks could take for a process.
		for _, cmd := range [][]string{{"FLUSHALL"}, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}} {
			if _, err := s.Do(cmd...); err != nil {
				fmt.Fprintln(os.Stderr, "example server:", err)
			}
		}
		addrs[i] = s.Addr
	}
	return addrs
}

// skipExamplesWithoutRedis makes the test binary skip the examples when
// redis-server is not installed and CI is not set; under CI a missing
// server stays a failure.
func skipExamplesWithoutRedis() {
	err := redistest.Available()
	if ci := os.Getenv("CI"); err == nil || (ci != "" && ci != "false") {
		return
	}
	fmt.Fprintf(os.Stderr, "%v: skipping the examples (install redis-server and redis-tools to run them)\n", err)
	if flag.Lookup("test.skip") != nil {
		_ = flag.Set("test.skip", "^Example")
	}
}

// stopExampleServers stops the examples' servers, if they were started.
func stopExampleServers() {
	for _, s := range exampleServers {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop example server:", err)
		}
	}
}
