package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14DryRunFiguresMatchTheMove: reshard --dry-run's keys and
// bytes per pair of nodes, and its totals, are those the move then
// moves, as the servers tell them: which keys left which node for which
// (KEYS on each before and after the move) and their sizes on the old
// node (MEMORY USAGE, asked before).
func TestReview14DryRunFiguresMatchTheMove(t *testing.T) {
	const n = 3000
	servers, from, to, fromCfg, _ := growTwoToThree(t)
	c, err := shard.New(context.Background(), fromCfg)
	require.NoError(t, err)
	pl := c.Pipeline()
	for i := range n {
		pl.Send("SET", fmt.Sprintf("dry:%d", i), strings.Repeat("x", 10+(i%7)*300))
	}
	res, err := pl.Exec(context.Background())
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	c.Close()

	// Where each key is, and its size there, before the move.
	where := map[string]string{}
	size := map[string]int64{}
	for _, s := range servers {
		for _, k := range keysOn(t, s) {
			where[k] = s.Addr
			v, err := s.Do("MEMORY", "USAGE", k)
			require.NoError(t, err)
			size[k], err = strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
		}
	}
	require.Len(t, where, n)

	code, dryOut, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--dry-run", "--quiet")
	require.Equal(t, 0, code, errOut)
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--yes", "--quiet")
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)

	// What moved, by the servers.
	want := map[[2]string][2]int64{}
	var wantKeys, wantBytes int64
	after := 0
	for _, s := range servers {
		for _, k := range keysOn(t, s) {
			after++
			if old := where[k]; old != s.Addr {
				f := want[[2]string{old, s.Addr}]
				want[[2]string{old, s.Addr}] = [2]int64{f[0] + 1, f[1] + size[k]}
				wantKeys++
				wantBytes += size[k]
			}
		}
	}
	require.Equal(t, n, after, "keys after the move")
	require.NotZero(t, wantKeys)
	t.Logf("moved, by the servers: %v", want)

	for _, run := range []struct{ name, out, verb string }{{"dry run", dryOut, "would move"}, {"move", out, "moved"}} {
		assert.Equal(t, want, flowsOf(t, run.out), "%s: keys and bytes per pair of nodes:\n%s", run.name, run.out)
		m := regexp.MustCompile(run.verb + ` (\d+) \((\d+) bytes measured\)`).FindStringSubmatch(run.out)
		require.NotNil(t, m, "%s: the totals:\n%s", run.name, run.out)
		assert.Equal(t, strconv.FormatInt(wantKeys, 10), m[1], "%s: keys in all", run.name)
		assert.Equal(t, strconv.FormatInt(wantBytes, 10), m[2], "%s: bytes in all", run.name)
	}
}

// keysOn returns the keys on server s but the fence's markers.
func keysOn(t *testing.T, s *redistest.Server) []string {
	t.Helper()
	conn, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	defer conn.Close()
	keys, err := redis.Strings(conn.Do("KEYS", "*"))
	require.NoError(t, err)
	out := keys[:0]
	for _, k := range keys {
		if !shard.IsFenceKey(k) {
			out = append(out, k)
		}
	}
	return out
}

// flowsOf reads the table of flows that reshard prints: keys and bytes
// per (from, to).
func flowsOf(t *testing.T, out string) map[[2]string][2]int64 {
	t.Helper()
	flows := map[[2]string][2]int64{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "FROM" {
			in = true
			continue
		}
		if !in || len(f) != 4 {
			in = false
			continue
		}
		keys, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err, line)
		bytes, err := strconv.ParseInt(f[3], 10, 64)
		require.NoError(t, err, line)
		flows[[2]string{f[0], f[1]}] = [2]int64{keys, bytes}
	}
	return flows
}
