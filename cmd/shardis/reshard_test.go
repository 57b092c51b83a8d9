package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReshardAndVerify(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s,%s?names=a,b,c", servers[0].Addr, servers[1].Addr, servers[2].Addr)
	toFile := writeConfig(t, fmt.Sprintf("url: %q\n", to))
	cfg, err := shard.ParseURL(from)
	require.NoError(t, err)
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	for i := 0; i < 600; i++ {
		_, err := c.Do(context.Background(), "SET", fmt.Sprintf("k:%d", i), i)
		require.NoError(t, err)
	}
	c.Close()

	// Before the move, the keys are misplaced for the new topology.
	code, out, _ := runCLI(t, "", "verify", "--config", toFile)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "misplaced")

	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", toFile, "--dry-run", "--quiet")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "would move")
	assert.Contains(t, out, servers[2].Addr, "the flows name the new shard")
	size, err := servers[2].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, "0", size)

	code, out, errOut = runCLI(t, "", "reshard", "--from", from, "--to", toFile, "--rate", "20000/s", "--max-block", "5ms")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "verify: 600 keys scanned, 0 misplaced")
	// No process uses the migration: the run ends it and leaves no marker.
	assert.Contains(t, out, "finished: no process uses the migration any more; fence cleared")
	for _, s := range servers[:2] {
		keys, err := s.Do("KEYS", "shardis:migration:*")
		require.NoError(t, err)
		assert.Empty(t, keys, "no marker left on %s", s.Addr)
	}
	assert.Contains(t, errOut, "keys/s")
	assert.Contains(t, errOut, "done in")
	size, err = servers[2].Do("DBSIZE")
	require.NoError(t, err)
	assert.NotEqual(t, "0", size)

	code, out, errOut = runCLI(t, "", "verify", "--config", to)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "600 keys scanned, 0 misplaced")
}

func TestReshardFlags(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"reshard"}, 2, "--from and --to are required"},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--rate", "fast"}, 2, "--rate"},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--rate", "-5MB/s"}, 2, "--rate"},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--batch", "-1"}, 2, "--batch -1"},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--max-block", "-5ms"}, 2, "--max-block -5ms"},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--max-block", "soon"}, 2, "--max-block"},
		{[]string{"reshard", "--from", "nosuchfile.yaml", "--to", "redis-ring://127.0.0.1:2"}, 2, "--from"}, // a bad config is a usage error, as in verify
		{[]string{"verify"}, 2, "--config is required"},
		// Go's flag package stops at the first word that is no flag: what
		// follows (here --dry-run) would be dropped without a word.
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--quiet", "now", "--dry-run"}, 2, `unexpected argument "now"`},
		{[]string{"verify", "--config", "redis-ring://127.0.0.1:1", "now"}, 2, `unexpected argument "now"`},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--dry-run", "--arm"}, 2, "--dry-run changes nothing"},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--dry-run", "--finish"}, 2, "--dry-run changes nothing"},
		{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--dry-run", "--clear-fence"}, 2, "--dry-run changes nothing"},
	}
	for _, rate := range []string{"NaN", "nan/s", "Inf", "+Inf/s", "NaNMB/s", "InfKB/s"} {
		cases = append(cases, struct {
			args []string
			code int
			msg  string
		}{[]string{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--rate", rate}, 2, "--rate"})
	}
	for _, tc := range cases {
		code, _, errOut := runCLI(t, "", tc.args...)
		assert.Equal(t, tc.code, code, strings.Join(tc.args, " "))
		assert.Contains(t, errOut, tc.msg, strings.Join(tc.args, " "))
	}
	for in, want := range map[string][2]float64{"5000": {5000, 0}, "5000/s": {5000, 0}, "20MB/s": {0, 20 << 20}, "512kb": {0, 512 << 10}} {
		k, b, err := parseRate(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, [2]float64{k, b}, in)
	}
}

// growTwoToThree starts three servers and returns them with the URLs
// (and configs) of a ring on the first two, a and b, and of the ring that
// adds the third, c.
func growTwoToThree(t *testing.T) (servers []*redistest.Server, from, to string, fromCfg, toCfg shard.Config) {
	t.Helper()
	servers = redistest.StartNTB(t, 3, redistest.Options{})
	from = fmt.Sprintf("redis-ring://%s,%s?names=a,b&client_name=auto", servers[0].Addr, servers[1].Addr)
	to = fmt.Sprintf("redis-ring://%s,%s,%s?names=a,b,c&client_name=auto", servers[0].Addr, servers[1].Addr, servers[2].Addr)
	var err error
	fromCfg, err = shard.ParseURL(from)
	require.NoError(t, err)
	toCfg, err = shard.ParseURL(to)
	require.NoError(t, err)
	return servers, from, to, fromCfg, toCfg
}

func TestReshardArmAndClearFence(t *testing.T) {
	ctx := context.Background()
	servers, from, to, fromCfg, toCfg := growTwoToThree(t)
	oldOnly, err := shard.New(ctx, fromCfg)
	require.NoError(t, err)
	defer oldOnly.Close()
	_, err = oldOnly.Do(ctx, "SET", "x", 1) // a pooled connection on an old node
	require.NoError(t, err)

	code, _, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--arm")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "routes by topology "+shard.TopologyID(fromCfg)+" alone")

	require.NoError(t, oldOnly.StartMigration(ctx, toCfg))
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--arm")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "armed")
	info, ok := oldOnly.Migration()
	require.True(t, ok)
	key := shard.FenceKey(info.FromID, info.ToID)
	for _, s := range servers[:2] {
		v, err := s.Do("GET", key)
		require.NoError(t, err)
		p, _, ok := shard.ParseFenceValue(v)
		assert.True(t, ok && p == shard.PhaseArmed, "marker on %s: %q", s.Addr, v)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if i, _ := oldOnly.Migration(); i.Phase == shard.PhaseArmed {
			break
		}
		require.False(t, time.Now().After(deadline), "the client never saw the armed marker")
		time.Sleep(20 * time.Millisecond)
	}

	code, out, errOut = runCLI(t, "", "reshard", "--from", from, "--to", to, "--clear-fence")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "fence cleared")
	for _, s := range servers[:2] {
		v, err := s.Do("EXISTS", key)
		require.NoError(t, err)
		assert.Equal(t, "0", v)
	}
	for _, flags := range [][]string{{"--arm", "--clear-fence"}, {"--arm", "--finish"}, {"--finish", "--clear-fence"}} {
		code, _, errOut = runCLI(t, "", append([]string{"reshard", "--from", from, "--to", to}, flags...)...)
		assert.Equal(t, 2, code, "%v exclude each other", flags)
		assert.Contains(t, errOut, "exclude each other")
	}
}

// TestReshardFinish: --finish refuses, naming the connection, while a
// process still routes by the migration, and a move that ends clean keeps
// the marker then; once the process runs the new config, --finish
// verifies and deletes the marker.
func TestReshardFinish(t *testing.T) {
	ctx := context.Background()
	servers, from, to, fromCfg, toCfg := growTwoToThree(t)
	proc, err := shard.New(ctx, fromCfg)
	require.NoError(t, err)
	defer proc.Close()
	require.NoError(t, proc.StartMigration(ctx, toCfg))
	for i := 0; i < 100; i++ {
		_, err := proc.Do(ctx, "SET", fmt.Sprintf("f:%d", i), i)
		require.NoError(t, err)
	}
	info, _ := proc.Migration()
	key := shard.FenceKey(info.FromID, info.ToID)

	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--quiet")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "verify: 100 keys scanned, 0 misplaced")
	assert.Contains(t, out, "fence kept: ")
	assert.Contains(t, out, proc.InstanceID(), "the process's beacon is named")
	assert.Contains(t, out, "--finish")

	code, _, errOut = runCLI(t, "", "reshard", "--from", from, "--to", to, "--finish")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "still use the migration")
	assert.Contains(t, errOut, proc.InstanceID())
	assert.Contains(t, errOut, "still routes by the migration (phase ")
	for _, s := range servers[:2] {
		v, err := s.Do("EXISTS", key)
		require.NoError(t, err)
		assert.Equal(t, "1", v, "marker kept on %s", s.Addr)
	}

	require.NoError(t, proc.FinishMigration())
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, out, errOut = runCLI(t, "", "reshard", "--from", from, "--to", to, "--finish")
		if code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // the server drops the closed beacons
	}
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "verify: 100 keys scanned, 0 misplaced")
	assert.Contains(t, out, "finished: fence cleared")
	for _, s := range servers[:2] {
		v, err := s.Do("EXISTS", key)
		require.NoError(t, err)
		assert.Equal(t, "0", v)
	}
	v, err := proc.Do(ctx, "GET", "f:42")
	require.NoError(t, err)
	assert.Equal(t, "42", fmt.Sprintf("%s", v))
}
