package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attribution counts, per server address and command name (lower case),
// the commands the Command and Pipeline hooks said were sent there.
type attribution struct {
	mu     sync.Mutex
	counts map[string]map[string]int
	byNode map[string]int64 // every attempt reported, by Node.Name
	moved  int
}

func (a *attribution) add(server, name string, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts[server] == nil {
		a.counts[server] = map[string]int{}
	}
	a.counts[server][strings.ToLower(name)] += n
}

func (a *attribution) hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			a.mu.Lock()
			a.byNode[ev.Node.Name]++
			a.mu.Unlock()
			if ev.Outcome == shard.OutcomeRedirect {
				a.mu.Lock()
				a.moved++
				a.mu.Unlock()
				return // refused before it ran: the server does not count it
			}
			a.add(ev.ServerAddr, ev.Name, 1)
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			a.mu.Lock()
			a.byNode[ev.Node.Name] += int64(ev.Commands)
			a.mu.Unlock()
			for _, line := range strings.Split(ev.Statement(0), "\n") {
				name, _, _ := strings.Cut(line, " ")
				a.add(ev.ServerAddr, name, 1)
			}
		},
	}
}

var attributedCommands = []string{"set", "get", "mget", "mset", "del", "exists", "incr", "watch", "multi", "exec", "scan", "echo", "dbsize"}

func serverCalls(t *testing.T, servers []*redistest.Server) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	for _, s := range servers {
		out[s.Addr] = map[string]int{}
		for _, name := range attributedCommands {
			n, err := s.CommandCalls(name)
			require.NoError(t, err)
			out[s.Addr][name] = n
		}
	}
	return out
}

// TestReview14HooksAttributeEveryCommandToItsServer: every command the
// hooks report names the server that ran it, as the servers' own
// counts say: commands, split multi-key commands, pipelines,
// transactions, scans, ForEachShard, replica reads and redirects.
func TestReview14HooksAttributeEveryCommandToItsServer(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	a := &attribution{counts: map[string]map[string]int{}, byNode: map[string]int64{}}
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Hooks = a.hooks()
	c := newClient(t, cfg)
	all := append(append([]*redistest.Server{}, rc.Masters()...), rc.Replicas()...)
	before := serverCalls(t, all)

	// A redirect: the (empty) slot of a key given to another master
	// once the client has its map.
	k, slot := keyOnMaster(t, rc, rc.Masters()[0], "attrmv")
	assignSlot(t, slot, rc.Masters()[0], rc.Masters()[1])
	_, err := c.Do(ctx, "SET", k, "w")
	require.NoError(t, err)
	attributionWorkload(t, c)

	after := serverCalls(t, all)
	a.mu.Lock()
	defer a.mu.Unlock()
	reads := map[string]bool{"get": true, "mget": true, "exists": true, "scan": true, "echo": true, "dbsize": true}
	replica := map[string]bool{}
	for _, r := range rc.Replicas() {
		replica[r.Addr] = true
	}
	for _, srv := range all {
		for _, name := range attributedCommands {
			if replica[srv.Addr] && !reads[name] {
				continue // the master's writes, replicated
			}
			got := after[srv.Addr][name] - before[srv.Addr][name]
			assert.Equal(t, got, a.counts[srv.Addr][name], "%s on %s: the server's count, the hooks'", name, srv.Addr)
		}
	}
	assert.Equal(t, 1, a.moved, "the redirect was seen")
	for _, st := range c.Stats().Nodes {
		assert.Equal(t, st.Commands, a.byNode[st.Node.Name], "%s: Stats' commands, the hooks' attempts", st.Node.Name)
	}
	for addr := range a.counts {
		if _, ok := after[addr]; !ok {
			t.Errorf("hooks named %q, no server: %v", addr, a.counts[addr])
		}
	}
}

// attributionWorkload sends commands of every kind through c: commands,
// ForEachMaster's, split multi-key commands, a pipeline, a transaction
// and a scan.
func attributionWorkload(t *testing.T, c *shard.Client) {
	t.Helper()
	ctx := context.Background()
	for i := range 60 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("attr:%d", i), i)
		require.NoError(t, err)
	}
	require.NoError(t, c.ForEachMaster(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "ECHO", "x")
		return err
	}))
	for i := range 60 {
		_, err := c.Do(ctx, "GET", fmt.Sprintf("attr:%d", i))
		require.NoError(t, err)
	}
	var keys []any
	for i := range 30 {
		keys = append(keys, fmt.Sprintf("attr:%d", i))
	}
	_, err := c.Do(ctx, "MGET", keys...)
	require.NoError(t, err)
	_, err = c.Do(ctx, "EXISTS", keys...)
	require.NoError(t, err)
	_, err = c.Do(ctx, "MSET", "attr:m1", 1, "attr:m2", 2, "attr:m3", 3, "attr:m4", 4)
	require.NoError(t, err)
	p := c.Pipeline()
	for i := range 20 {
		p.Send("INCR", fmt.Sprintf("attr:p%d", i))
		p.Send("GET", fmt.Sprintf("attr:p%d", i))
	}
	_, err = p.Exec(ctx)
	require.NoError(t, err)
	_, err = c.Tx(ctx, []string{"attr:{t}a"}, func(tx *shard.Tx) error {
		if _, err := tx.Do("GET", "attr:{t}a"); err != nil {
			return err
		}
		if err := tx.Queue("INCR", "attr:{t}a"); err != nil {
			return err
		}
		return tx.Queue("INCR", "attr:{t}b")
	})
	require.NoError(t, err)
	s := c.Scan(shard.ScanOptions{Match: "attr:*", Count: 5})
	for s.Next(ctx) {
	}
	require.NoError(t, s.Err())
	_, err = c.Do(ctx, "DEL", keys...)
	require.NoError(t, err)

}

// TestReview14RingHooksAttributeEveryCommandToItsServer is
// TestReview14HooksAttributeEveryCommandToItsServer in ring mode.
func TestReview14RingHooksAttributeEveryCommandToItsServer(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	a := &attribution{counts: map[string]map[string]int{}, byNode: map[string]int64{}}
	cfg := ringConfig(servers)
	cfg.Hooks = a.hooks()
	c := newClient(t, cfg)
	before := serverCalls(t, servers)
	attributionWorkload(t, c)
	after := serverCalls(t, servers)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, srv := range servers {
		for _, name := range attributedCommands {
			got := after[srv.Addr][name] - before[srv.Addr][name]
			assert.Equal(t, got, a.counts[srv.Addr][name], "%s on %s: the server's count, the hooks'", name, srv.Addr)
		}
	}
	for _, st := range c.Stats().Nodes {
		assert.Equal(t, st.Commands, a.byNode[st.Node.Name], "%s: Stats' commands, the hooks' attempts", st.Node.Name)
	}
	for addr := range a.counts {
		if _, ok := after[addr]; !ok {
			t.Errorf("hooks named %q, no server: %v", addr, a.counts[addr])
		}
	}
}
