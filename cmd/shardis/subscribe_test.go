package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is written by the CLI while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startSubscribe runs "shardis subscribe args..." until the returned stop
// is called; stop returns the exit code.
func startSubscribe(args ...string) (out, errOut *lockedBuffer, stop func() int) {
	out, errOut = &lockedBuffer{}, &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	env := &cliEnv{stdin: strings.NewReader(""), stdout: out, stderr: errOut}
	done := make(chan int, 1)
	go func() { done <- run(ctx, env, append([]string{"subscribe"}, args...)) }()
	return out, errOut, func() int { cancel(); return <-done }
}

func waitOutput(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSubscribeCLIRing(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	url := fmt.Sprintf("redis-ring://%s,%s,%s", servers[0].Addr, servers[1].Addr, servers[2].Addr)

	out, errOut, stop := startSubscribe("--url", url, "--pattern", "cli:*")
	waitOutput(t, "the subscription", func() bool { return strings.Contains(errOut.String(), "psubscribe cli:*") })
	// A pattern is on every shard: publish straight to each one.
	for i, s := range servers {
		conn, err := redis.Dial("tcp", s.Addr)
		require.NoError(t, err)
		_, err = conn.Do("PUBLISH", fmt.Sprintf("cli:%d", i), fmt.Sprintf("tab\there %d", i))
		conn.Close()
		require.NoError(t, err)
	}
	waitOutput(t, "three lines", func() bool { return strings.Count(out.String(), "\n") == 3 })
	assert.Equal(t, 0, stop(), errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	for i := range servers {
		assert.Contains(t, lines, fmt.Sprintf("cli:%d\tcli:*\ttab\\there %d", i, i))
	}

	cfg := writeConfig(t, fmt.Sprintf("shards: [{addr: %q}]\n", servers[0].Addr))
	out, errOut, stop = startSubscribe("--config", cfg, "plain")
	waitOutput(t, "the subscription", func() bool { return strings.Contains(errOut.String(), "subscribe plain") })
	conn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Do("PUBLISH", "plain", "line\nbreak")
	require.NoError(t, err)
	waitOutput(t, "one line", func() bool { return strings.Contains(out.String(), "\n") })
	assert.Equal(t, 0, stop())
	assert.Equal(t, "plain\tline\\nbreak\n", out.String())
}

func TestSubscribeCLIShardedOnACluster(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	out, errOut, stop := startSubscribe("--url", "redis-cluster://"+rc.Seeds()[0], "--sharded", "s:1", "s:2", "s:3")
	waitOutput(t, "the subscriptions", func() bool { return strings.Count(errOut.String(), "ssubscribe") == 3 })
	for i := 1; i <= 3; i++ {
		ch := fmt.Sprintf("s:%d", i)
		// SPUBLISH only works at the slot's owner.
		sent := false
		for _, m := range rc.Masters() {
			conn, err := redis.Dial("tcp", m.Addr)
			require.NoError(t, err)
			n, err := redis.Int(conn.Do("SPUBLISH", ch, "v"))
			conn.Close()
			if err == nil && n == 1 {
				sent = true
				break
			}
		}
		require.True(t, sent, ch)
	}
	waitOutput(t, "three lines", func() bool { return strings.Count(out.String(), "\n") == 3 })
	assert.Equal(t, 0, stop(), errOut.String())
	assert.ElementsMatch(t, []string{"s:1\tv", "s:2\tv", "s:3\tv"}, strings.Split(strings.TrimSpace(out.String()), "\n"))
}

func TestSubscribeCLIUsage(t *testing.T) {
	for _, args := range [][]string{
		{"subscribe"},
		{"subscribe", "--url", "redis-ring://127.0.0.1:1"},
		{"subscribe", "ch"},
		{"subscribe", "--url", "redis-ring://127.0.0.1:1", "--config", "x.yaml", "ch"},
		{"subscribe", "--url", "redis-ring://127.0.0.1:1", "--pattern", "--sharded", "ch"},
		{"subscribe", "--url", "redis-ring://127.0.0.1:1", "--keyspace", "KEA", "--pattern"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
	}
}
