package reshard_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain runs the binary as a load generator when asked to (see
// loadgen_test.go and loadgen_fault_test.go), else runs the tests and
// fails on leaked goroutines.
func TestMain(m *testing.M) {
	if spec := os.Getenv(loadEnv); spec != "" {
		os.Exit(runLoad(spec))
	}
	if spec := os.Getenv(faultLoadEnv); spec != "" {
		os.Exit(runFaultLoad(spec))
	}
	skipExamplesWithoutRedis() // example_servers_test.go
	code := m.Run()
	removeCLI() // cli_test.go
	stopExampleServers()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// ringURL is the URL of a ring over servers named s<i>, with weights
// (nil: all 1).
func ringURL(servers []*redistest.Server, names []string, weights []int) string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	u := "redis-ring://" + strings.Join(addrs, ",") + "?names=" + strings.Join(names, ",") +
		"&read_timeout=5s&health_interval=200ms"
	if weights != nil {
		ws := make([]string, len(weights))
		for i, w := range weights {
			ws[i] = fmt.Sprint(w)
		}
		u += "&weights=" + strings.Join(ws, ",")
	}
	return u
}

// moveAll starts two servers (stopped when t ends) and returns them with a
// one-shard ring on the first and one on the second: every key moves.
func moveAll(t *testing.T) (servers []*redistest.Server, from, to shard.Config) {
	t.Helper()
	servers = redistest.StartNTB(t, 2, redistest.Options{})
	from = mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
	to = mustParse(t, ringURL(servers[1:], []string{"s1"}, nil))
	return servers, from, to
}

func clusterURL(c *redistest.Cluster) string {
	return "redis-cluster://" + strings.Join(c.Seeds(), ",") + "?read_timeout=5s"
}

func mustParse(t *testing.T, u string) shard.Config {
	t.Helper()
	cfg, err := shard.ParseURL(u)
	require.NoError(t, err)
	return cfg
}

func newClient(t *testing.T, cfg shard.Config) *shard.Client {
	t.Helper()
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitArmed waits until c sees its migration's fence armed (what names
// the wait).
func waitArmed(t *testing.T, c *shard.Client, what string) {
	t.Helper()
	waitFor(t, 10*time.Second, what, func() bool {
		i, ok := c.Migration()
		return ok && i.Phase == shard.PhaseArmed
	})
}

// moveBack rolls a migration from from to to back: once every client's
// beacon tells of the reverse migration (waiting beacons at the most), it
// moves the keys from to back to from and checks that the verification
// finds none misplaced.
func moveBack(t *testing.T, from, to shard.Config, beacons time.Duration) *reshard.Report {
	t.Helper()
	ctx := context.Background()
	waitFor(t, beacons, "the beacons of the reverse migration", func() bool {
		return reshard.CheckClients(ctx, to, from, false) == nil
	})
	back, err := reshard.Move(ctx, reshard.Options{From: to, To: from})
	require.NoError(t, err)
	require.NotNil(t, back.Verify)
	assert.Zero(t, back.Verify.Misplaced, "misplaced: %v", back.Verify.Samples)
	return back
}
