package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setOn runs SET key on s directly (the ring's placement is not the
// point: each shard emits the events of its own keys).
func setOn(t *testing.T, s *redistest.Server, key string) {
	t.Helper()
	conn, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Do("SET", key, "v")
	require.NoError(t, err)
}

// "shardis subscribe --keyspace" with one shard of three down failed at
// once, although the names of the other shards could be followed and the
// down one subscribed once back, as "shardis subscribe" does for channels
// and patterns. It now runs on the shards that answer, names the down
// one on stderr, and configures and subscribes it once it is back.
func TestReview8SubscribeCLIKeyspaceWithOneShardDown(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	url := fmt.Sprintf("redis-ring://%s,%s,%s", servers[0].Addr, servers[1].Addr, servers[2].Addr)
	require.NoError(t, servers[2].Kill())

	out, errOut, stopOnce := startSubscribe("--url", url, "--keyspace", "KEA", "__keyevent@*__:set")
	code, stopped := 0, false
	stop := func() int {
		if !stopped {
			stopped, code = true, stopOnce()
		}
		return code
	}
	defer stop()
	waitOutput(t, "the down shard reported: "+errOut.String(), func() bool { return strings.Contains(errOut.String(), servers[2].Addr) })
	for i, s := range servers[:2] {
		waitOutput(t, fmt.Sprintf("subscribed on live shard %d", i), func() bool { return subscribedOn(s, "") == 1 })
		key := fmt.Sprintf("r8ks:live%d", i)
		setOn(t, s, key)
		waitOutput(t, "the event of "+key+": "+out.String()+errOut.String(), func() bool {
			return strings.Contains(out.String(), "__keyevent@0__:set\t__keyevent@*__:set\t"+key+"\n")
		})
	}

	require.NoError(t, servers[2].Restart())
	waitOutput(t, "subscribed on the shard back", func() bool { return subscribedOn(servers[2], "") == 1 })
	setOn(t, servers[2], "r8ks:back")
	waitOutput(t, "the event of the shard back (configured by the command): "+out.String(), func() bool {
		return strings.Contains(out.String(), "__keyevent@0__:set\t__keyevent@*__:set\tr8ks:back\n")
	})
	assert.Equal(t, 0, stop(), errOut.String())
}

// With no node answering, "shardis subscribe --keyspace" exits 1 with an
// error naming a node, as without --keyspace.
func TestReview8SubscribeCLIKeyspaceExitsWhenNoNodeAnswers(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	url := fmt.Sprintf("redis-ring://%s,%s", servers[0].Addr, servers[1].Addr)
	for _, s := range servers {
		require.NoError(t, s.Kill())
	}
	code, errOut, exited := runKeyspaceSubscribe(url)
	if !exited {
		t.Fatalf("still running 20 s after start with no node reachable; stderr: %s", errOut)
	}
	assert.Equal(t, 1, code, errOut)
	if !strings.Contains(errOut, servers[0].Addr) && !strings.Contains(errOut, servers[1].Addr) {
		t.Errorf("stderr names no node: %q", errOut)
	}
}

// A user not allowed the CONFIG SET of --keyspace FLAGS: every node
// answers, and refuses. Retrying would only repeat the refusal, so the
// command exits 1 with it rather than wait on a node that answers.
func TestReview8SubscribeCLIKeyspaceConfigRefusedExits(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{
		Users: []redistest.User{{Name: "watcher", Password: "pw", Rules: "~* &* +@all -config"}},
	})
	url := fmt.Sprintf("redis-ring://watcher:pw@%s,%s", servers[0].Addr, servers[1].Addr)
	code, errOut, exited := runKeyspaceSubscribe(url)
	if !exited {
		t.Fatalf("still running 20 s after every node refused the CONFIG SET; stderr: %s", errOut)
	}
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "NOPERM")
	assert.NotContains(t, errOut, "pw@", "the password in the error")
}

// runKeyspaceSubscribe runs "shardis subscribe --url url --keyspace KEA"
// and waits 20 s at the most for it to exit: it returns the exit code,
// what it wrote to stderr, and whether it exited (if not, it is stopped).
func runKeyspaceSubscribe(url string) (code int, stderr string, exited bool) {
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := &cliEnv{stdin: strings.NewReader(""), stdout: out, stderr: errOut}
	done := make(chan int, 1)
	go func() { done <- run(ctx, env, []string{"subscribe", "--url", url, "--keyspace", "KEA"}) }()
	select {
	case code := <-done:
		return code, errOut.String(), true
	case <-time.After(20 * time.Second):
		cancel()
		<-done
		return 0, errOut.String(), false
	}
}
