package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14ReshardRateFollowsThePace: the moved keys' rate and the
// MB/s that reshard prints are the pace the move kept. They were the
// keys and bytes moved over the time since the move began, which counts
// the wait for the processes to acknowledge the fence (here 3 s): at
// --rate 400 the last line read about 250 keys/s, and the MB/s as much
// below the bytes actually moved per second.
func TestReview14ReshardRateFollowsThePace(t *testing.T) {
	const n, rate = 2000, 400.0
	const hold = 3 * time.Second // how long the migrating process takes to acknowledge the fence
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=s0", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s?names=s1", servers[1].Addr)
	fromCfg, err := shard.ParseURL(from)
	require.NoError(t, err)
	toCfg, err := shard.ParseURL(to)
	require.NoError(t, err)

	// Every key moves (from s0 alone to s1 alone); 4 KB values, so that
	// the bytes per second read well above the 0.1 MB/s the line shows.
	conn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer conn.Close()
	value := strings.Repeat("v", 4000)
	for i := range n {
		require.NoError(t, conn.Send("SET", fmt.Sprintf("rate:%d", i), value))
	}
	require.NoError(t, conn.Flush())
	for range n {
		_, err := conn.Receive()
		require.NoError(t, err)
	}
	// The bytes the keys hold, as the old node measures them.
	for i := range n {
		require.NoError(t, conn.Send("MEMORY", "USAGE", fmt.Sprintf("rate:%d", i)))
	}
	require.NoError(t, conn.Flush())
	var size int64
	for range n {
		s, err := redis.Int64(conn.Receive())
		require.NoError(t, err)
		size += s
	}
	wantMB := rate * float64(size) / n / (1 << 20)
	conn.Close()

	// A process on the migration (its beacon) that acknowledges the
	// fence by closing its connection, hold after the fence went up.
	fenced := func(v string) bool { p, _, ok := shard.ParseFenceValue(v); return ok && p == shard.PhaseFenced }
	acked := servers[0].LeaveAfterTB(t, fmt.Sprintf("shardis:rate1:migrating:%s>%s", shard.TopologyID(fromCfg), shard.TopologyID(toCfg)),
		shard.FenceKey(shard.TopologyID(fromCfg), shard.TopologyID(toCfg)), fenced, hold)

	start := time.Now()
	// --allow-unnamed: the test's own connection that watches the marker.
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--rate", "400/s", "--yes", "--allow-unnamed")
	took := time.Since(start)
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)
	require.NoError(t, <-acked, "the process acknowledging the fence")
	require.Greater(t, took, hold, "the move waited for the fence")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	re := regexp.MustCompile(`(\d+) moved \((\d+) keys/s\), \d+ scanned/s, ([\d.]+) MB/s, done in`)
	mm := re.FindStringSubmatch(last)
	require.NotNil(t, mm, "the last progress line: %q", last)
	require.Equal(t, strconv.Itoa(n), mm[1], "keys moved: %q", last)
	keysPS, _ := strconv.ParseFloat(mm[2], 64)
	mbPS, _ := strconv.ParseFloat(mm[3], 64)
	t.Logf("last progress line: %q", last)
	assert.InDelta(t, rate, keysPS, 0.15*rate, "moved keys/s at --rate 400, after %v of fence wait: %q", hold, last)
	assert.InDelta(t, wantMB, mbPS, 0.15*wantMB+0.1, "MB/s at --rate 400 of %d bytes a key: %q", size/n, last)
}
