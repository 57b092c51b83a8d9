package shard_test

import (
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/shardis/shardis/internal/redistest"
)

// The examples run against real redis-server processes started here, so
// their bodies use only the public API and read like code to copy: they
// take "host:port" addresses from redisAddrs and clusterSeeds. Without a
// redis-server on PATH (and without CI set), the examples are skipped with
// a note instead of failing or exiting the test binary.

var (
	exampleOnce    sync.Once
	exampleServers []*redistest.Server
	exampleErr     error

	sentinelOnce sync.Once
	sentinelSet  *redistest.SentinelSet
	sentinelErr  error
)

// redisAddrs returns the addresses of n (at most 3) empty redis-servers.
// When they cannot be started it returns addresses nothing listens on, so
// the example fails by its output rather than by stopping the test binary.
func redisAddrs(n int) []string {
	exampleOnce.Do(func() {
		exampleServers, exampleErr = redistest.StartN(3, redistest.Options{})
	})
	addrs := make([]string, n)
	for i := range addrs {
		if exampleErr != nil {
			addrs[i] = fmt.Sprintf("127.0.0.1:%d", 1+i) // refused
			continue
		}
		s := exampleServers[i]
		if _, err := s.Do("FLUSHALL"); err != nil {
			fmt.Fprintln(os.Stderr, "example server:", err)
		}
		addrs[i] = s.Addr
	}
	if exampleErr != nil {
		fmt.Fprintln(os.Stderr, "example servers:", exampleErr)
	}
	return addrs
}

// clusterSeeds returns the seed addresses of the package's shared 3-master,
// 3-replica cluster.
func clusterSeeds() []string {
	c, err := shared.Get()
	if err != nil {
		fmt.Fprintln(os.Stderr, "example cluster:", err)
		return []string{"127.0.0.1:1"}
	}
	return c.Seeds()
}

// sentinelAddrs returns the addresses of a Sentinel and the name of the
// one master set (with one replica) it monitors.
func sentinelAddrs() (addrs []string, master string) {
	sentinelOnce.Do(func() {
		sentinelSet, sentinelErr = redistest.StartSentinels(redistest.SentinelOptions{Shards: 1, Replicas: 1, Sentinels: 1})
	})
	if sentinelErr != nil {
		fmt.Fprintln(os.Stderr, "example sentinels:", sentinelErr)
		return []string{"127.0.0.1:1"}, "master-0" // refused
	}
	return sentinelSet.Addrs(), sentinelSet.Names()[0]
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
	if sentinelSet != nil {
		if err := sentinelSet.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop example sentinels:", err)
		}
	}
	for _, s := range exampleServers {
		if err := s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop example server:", err)
		}
	}
}
