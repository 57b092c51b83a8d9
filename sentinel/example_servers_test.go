package sentinel_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// The examples run against real redis-server and redis-sentinel processes
// started here, so that their bodies use only the public API and read
// like code to copy.

// exampleSet is the examples' latest Sentinel set.
var exampleSet *redistest.SentinelSet

// sentinelAddrs returns the addresses of a Sentinel and the names of the
// master sets it monitors ("master-0", "master-1"), each a master with one
// replica. Every call starts a new set (and stops the previous one): an
// example that fails a master over leaves the next one a set where no
// failover has happened yet, which Sentinel would refuse to repeat at
// once.
func sentinelAddrs() (addrs, masters []string) {
	stopExampleSentinels()
	set, err := redistest.StartSentinels(redistest.SentinelOptions{Shards: 2, Replicas: 1, Sentinels: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, "example sentinels:", err)
		return []string{"127.0.0.1:1"}, []string{"master-0", "master-1"} // refused
	}
	exampleSet = set
	if err := promotable(set); err != nil {
		fmt.Fprintln(os.Stderr, "example sentinels:", err)
	}
	return set.Addrs(), set.Names()
}

// promotable waits until every Sentinel knows every replica as one it can
// promote (connected, in sync with its master): SENTINEL FAILOVER is
// refused (NOGOODSLAVE) before that.
func promotable(set *redistest.SentinelSet) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		err := replicasReady(ctx, set)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func replicasReady(ctx context.Context, set *redistest.SentinelSet) error {
	for _, s := range set.Sentinels {
		for _, master := range set.Names() {
			reply, err := s.DoContext(ctx, "SENTINEL", "REPLICAS", master)
			if err != nil {
				return err
			}
			fields := strings.Split(reply, "\n")
			var flags, link []string
			for i := 0; i+1 < len(fields); i += 2 {
				switch fields[i] {
				case "flags":
					flags = append(flags, fields[i+1])
				case "master-link-status":
					link = append(link, fields[i+1])
				}
			}
			if len(flags) == 0 || len(link) != len(flags) {
				return fmt.Errorf("sentinel %s: no replica of %s yet", s.Addr, master)
			}
			for i := range flags {
				if flags[i] != "slave" || link[i] != "ok" {
					return fmt.Errorf("sentinel %s: a replica of %s: flags %s, link %s", s.Addr, master, flags[i], link[i])
				}
			}
		}
	}
	return nil
}

// stopExampleSentinels stops the examples' latest set, if any.
func stopExampleSentinels() {
	if exampleSet == nil {
		return
	}
	if err := exampleSet.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop example sentinels:", err)
	}
	exampleSet = nil
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
