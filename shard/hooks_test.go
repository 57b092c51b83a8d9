package shard_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder keeps copies of every hook event.
type recorder struct {
	mu        sync.Mutex
	ops       []shard.Op
	commands  []shard.CommandEvent
	stmts     []string
	pipelines []shard.PipelineEvent
	dials     []shard.DialEvent
	refreshes []shard.RefreshEvent
	nodes     []shard.NodeEvent
	slots     []shard.SlotMapEvent
	keys      map[string]int // "command N", "pipeline N", "op N": key counts read during the hooks
}

type ctxMark struct{}

func (r *recorder) hooks() *shard.Hooks {
	return &shard.Hooks{
		Start: func(ctx context.Context, op *shard.Op) context.Context {
			return context.WithValue(ctx, ctxMark{}, op.Name)
		},
		Finish: func(ctx context.Context, op *shard.Op) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if ctx.Value(ctxMark{}) != op.Name {
				panic("Finish did not get Start's context")
			}
			r.note(fmt.Sprintf("op %d", len(r.ops)), op.Keys())
			r.ops = append(r.ops, *op)
			r.stmts = append(r.stmts, op.Statement(0))
		},
		Command: func(ctx context.Context, ev *shard.CommandEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if ctx.Value(ctxMark{}) == nil {
				panic("Command did not get Start's context")
			}
			r.note(fmt.Sprintf("command %d", len(r.commands)), ev.Keys())
			r.commands = append(r.commands, *ev)
			r.stmts = append(r.stmts, ev.Statement(64))
		},
		Pipeline: func(ctx context.Context, ev *shard.PipelineEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.note(fmt.Sprintf("pipeline %d", len(r.pipelines)), ev.Keys())
			cp := *ev
			cp.Redirects = append([]shard.Redirect(nil), ev.Redirects...)
			r.pipelines = append(r.pipelines, cp)
			r.stmts = append(r.stmts, ev.Statement(0))
		},
		Dial: func(ctx context.Context, ev *shard.DialEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.dials = append(r.dials, *ev)
		},
		Refresh: func(ctx context.Context, ev *shard.RefreshEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.refreshes = append(r.refreshes, *ev)
		},
		NodeState: func(ev shard.NodeEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.nodes = append(r.nodes, ev)
		},
		SlotMap: func(ev shard.SlotMapEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.slots = append(r.slots, ev)
		},
	}
}

func (r *recorder) note(what string, keys int) {
	if r.keys == nil {
		r.keys = map[string]int{}
	}
	r.keys[what] = keys
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops, r.commands, r.pipelines, r.stmts, r.keys = nil, nil, nil, nil, nil
}

func (r *recorder) snapshot() recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recorder{
		ops: append([]shard.Op(nil), r.ops...), commands: append([]shard.CommandEvent(nil), r.commands...),
		stmts: append([]string(nil), r.stmts...), pipelines: append([]shard.PipelineEvent(nil), r.pipelines...),
		dials: append([]shard.DialEvent(nil), r.dials...), refreshes: append([]shard.RefreshEvent(nil), r.refreshes...),
		nodes: append([]shard.NodeEvent(nil), r.nodes...), slots: append([]shard.SlotMapEvent(nil), r.slots...),
		keys: maps.Clone(r.keys),
	}
}

// holder returns the server of servers that holds key, asking each one.
func holder(t *testing.T, servers []*redistest.Server, key string) string {
	t.Helper()
	found := ""
	for _, s := range servers {
		n, err := redis.Int(direct(t, s.Addr).Do("EXISTS", key))
		require.NoError(t, err)
		if n == 1 {
			require.Empty(t, found, "%s on two servers", key)
			found = s.Addr
		}
	}
	require.NotEmpty(t, found, "%s on no server", key)
	return found
}

// keyInEmptySlot is keyOnMaster for a slot that holds no key yet (other
// tests fill the shared cluster), so that the slot can be moved.
func keyInEmptySlot(t *testing.T, rc *redistest.Cluster, m *redistest.Server, prefix string) (string, int) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		key, slot := keyOnMaster(t, rc, m, fmt.Sprintf("%s%d-", prefix, i))
		n, err := m.Do("CLUSTER", "COUNTKEYSINSLOT", fmt.Sprint(slot))
		require.NoError(t, err)
		if strings.TrimSpace(n) == "0" {
			return key, slot
		}
	}
	t.Fatalf("no empty slot on %s", m.Addr)
	return "", 0
}

// Every command reports the node that served it: the server that holds the
// key when asked directly.
func TestHooksReportTheNodeOfEachCommand(t *testing.T) {
	rec := &recorder{}
	c, servers := hookedRing(t, 3, rec.hooks())
	ctx := context.Background()

	for i := range 12 {
		rec.reset()
		key := fmt.Sprintf("hooked:%d", i)
		_, err := c.Do(ctx, "SET", key, "v")
		require.NoError(t, err)
		got := rec.snapshot()
		require.Len(t, got.commands, 1)
		ev := got.commands[0]
		assert.Equal(t, holder(t, servers, key), ev.Node.Addr, key)
		assert.Equal(t, "SET", ev.Name)
		assert.Equal(t, 1, got.keys["command 0"])
		assert.Equal(t, shard.OutcomeOK, ev.Outcome)
		assert.Positive(t, ev.Duration)
		require.Len(t, got.ops, 1)
		op := got.ops[0]
		assert.Equal(t, "SET", op.Name)
		assert.Equal(t, ev.Node, op.Node)
		assert.Equal(t, 1, op.Nodes)
		assert.Equal(t, 1, op.Attempts)
		assert.GreaterOrEqual(t, op.Duration, ev.Duration)
		assert.Equal(t, "SET "+key+" v", got.stmts[0])
	}

	// A pipeline: one event per node, whose command count is what that
	// server holds afterwards.
	for _, s := range servers {
		_, err := direct(t, s.Addr).Do("FLUSHALL")
		require.NoError(t, err)
	}
	rec.reset()
	p := c.Pipeline()
	const n = 60
	for i := range n {
		p.Send("SET", fmt.Sprintf("piped:%d", i), i)
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, n)
	got := rec.snapshot()
	require.Len(t, got.pipelines, 3, "one part per node")
	total := 0
	for i, ev := range got.pipelines {
		size, err := redis.Int(direct(t, ev.Node.Addr).Do("DBSIZE"))
		require.NoError(t, err)
		assert.Equal(t, size, ev.Commands, ev.Node.Addr)
		assert.Equal(t, ev.Commands, got.keys[fmt.Sprintf("pipeline %d", i)])
		assert.Equal(t, ev.Commands, ev.Outcomes[shard.OutcomeOK])
		total += ev.Commands
	}
	assert.Equal(t, n, total)
	require.Len(t, got.ops, 1)
	assert.Equal(t, "PIPELINE", got.ops[0].Name)
	assert.True(t, got.ops[0].Pipeline)
	assert.Equal(t, n, got.ops[0].Commands)
	assert.Equal(t, n, got.keys["op 0"])
	assert.Equal(t, 3, got.ops[0].Nodes)
	assert.Zero(t, got.ops[0].Failed)

	// A split MGET: one operation naming every key, ending on the nodes
	// that hold them.
	rec.reset()
	mget := []any{"piped:0", "piped:1", "piped:2", "piped:3", "piped:4", "piped:5"}
	_, err = c.Do(ctx, "MGET", mget...)
	require.NoError(t, err)
	holders := map[string]bool{}
	for _, k := range mget {
		holders[holder(t, servers, k.(string))] = true
	}
	got = rec.snapshot()
	require.Len(t, got.ops, 1)
	assert.Equal(t, len(mget), got.keys["op 0"])
	assert.Equal(t, len(holders), got.ops[0].Nodes)

	// The first use of each server dialed it.
	dialed := map[string]bool{}
	for _, d := range rec.snapshot().dials {
		require.NoError(t, d.Err)
		dialed[d.Node.Addr] = true
		assert.True(t, strings.HasPrefix(d.Node.Name, "shard-"), "the dial names the shard: %v", d.Node)
	}
	for _, s := range servers {
		assert.True(t, dialed[s.Addr], "dial of %s reported", s.Addr)
	}
}

// Each outcome class, produced by a real server.
func TestHooksClassifyOutcomes(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	rec := &recorder{}
	cfg := ringConfig(servers)
	cfg.Hooks = rec.hooks()
	cfg.Health.Interval = -1 // no background checks: the killed server stays in place
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "outcome:str", "x")
	require.NoError(t, err)

	cases := []struct {
		name string
		run  func() error
		want shard.Outcome
	}{
		{"ok", func() error { _, err := c.Do(ctx, "GET", "outcome:str"); return err }, shard.OutcomeOK},
		{"server error", func() error { _, err := c.Do(ctx, "INCR", "outcome:str"); return err }, shard.OutcomeServerError},
		{"timeout", func() error {
			dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			_, err := c.Do(dctx, "BLPOP", "outcome:empty", 5)
			return err
		}, shard.OutcomeTimeout},
		{"canceled", func() error {
			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			_, err := c.Do(cctx, "BLPOP", "outcome:empty", 5)
			return err
		}, shard.OutcomeCanceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec.reset()
			err := tc.run()
			assert.Equal(t, tc.want == shard.OutcomeOK, err == nil, "%v", err)
			got := rec.snapshot()
			require.Len(t, got.commands, 1)
			assert.Equal(t, tc.want, got.commands[0].Outcome, "%v", got.commands[0].Err)
			require.Len(t, got.ops, 1)
			assert.Equal(t, tc.want, got.ops[0].Outcome)
			assert.Equal(t, err, got.ops[0].Err)
		})
	}

	t.Run("failed", func(t *testing.T) {
		key := ""
		for i := 0; key == ""; i++ {
			k := fmt.Sprintf("outcome:dead:%d", i)
			if n, err := c.Router().Route(k); err == nil && n.Addr == servers[1].Addr {
				key = k
			}
		}
		require.NoError(t, servers[1].Kill())
		rec.reset()
		_, err := c.Do(ctx, "GET", key)
		require.Error(t, err)
		got := rec.snapshot()
		require.Len(t, got.commands, 1)
		assert.Equal(t, shard.OutcomeFailed, got.commands[0].Outcome)
		assert.Equal(t, servers[1].Addr, got.commands[0].Node.Addr)
		assert.Equal(t, shard.OutcomeFailed, got.ops[0].Outcome)
	})
}

// Hooks never see a password: not in statements, events or errors.
func TestHooksNeverSeeSecrets(t *testing.T) {
	const secret = "hunter2-Sekr3t"
	servers := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{{Name: "app", Password: secret}}})
	rec := &recorder{}
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", secret
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "secret:k", "v")
	require.NoError(t, err)
	// Commands that carry passwords, sent on purpose.
	_, err = c.DoKey(ctx, "secret:k", "AUTH", "app", secret)
	require.NoError(t, err)
	_, _ = c.DoKey(ctx, "secret:k", "HELLO", "2", "AUTH", "app", secret)
	_, _ = c.DoKey(ctx, "secret:k", "CONFIG", "SET", "masterauth", secret)
	p := c.Pipeline()
	p.SendKey("secret:k", "AUTH", secret)
	p.Send("GET", "secret:k")
	_, err = p.Exec(ctx)
	require.NoError(t, err)
	// A wrong password: the dial error reaches the Dial hook.
	bad := ringConfig(servers)
	bad.Pool.Username, bad.Pool.Password = "app", secret+"-wrong"
	bad.Hooks = rec.hooks()
	cb := newClient(t, bad)
	_, err = cb.Do(ctx, "GET", "secret:k")
	require.Error(t, err)

	got := rec.snapshot()
	require.NotEmpty(t, got.stmts)
	dump := fmt.Sprintf("%+v\n%+v\n%+v\n%+v\n%q", got.ops, got.commands, got.pipelines, got.dials, got.stmts)
	for _, d := range got.dials {
		if d.Err != nil {
			dump += d.Err.Error()
		}
	}
	assert.NotContains(t, dump, secret)
	assert.NotContains(t, dump, "Sekr3t")
	assert.Contains(t, got.stmts, "AUTH ? ?")
	assert.Contains(t, strings.Join(got.stmts, "\n"), "HELLO 2 AUTH ? ?")
	assert.Contains(t, strings.Join(got.stmts, "\n"), "CONFIG SET masterauth ?")
	assert.Contains(t, strings.Join(got.stmts, "\n"), "AUTH ?\nGET secret:k")
	failedDial := false
	for _, d := range got.dials {
		failedDial = failedDial || d.Err != nil
	}
	assert.True(t, failedDial, "the refused dial was reported")
}

// A statement is bounded when asked to be.
func TestHooksStatementIsBounded(t *testing.T) {
	rec := &recorder{}
	c, _ := hookedRing(t, 1, rec.hooks())
	big := strings.Repeat("x", 10000)
	_, err := c.Do(context.Background(), "SET", "bounded:k", big)
	require.NoError(t, err)
	got := rec.snapshot()
	require.Len(t, got.commands, 1)
	// The recorder asks for 64 bytes for commands, no bound for ops.
	assert.Len(t, got.stmts[0], 64)
	assert.True(t, strings.HasPrefix(got.stmts[0], "SET bounded:k xxx"))
	assert.True(t, strings.HasSuffix(got.stmts[0], "..."))
	assert.Len(t, got.stmts[1], len("SET bounded:k ")+len(big))
}

// Node state callbacks in ring mode: down, ejected, then up, restored.
func TestHooksNodeStateRing(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	rec := &recorder{}
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	cfg.Hooks = rec.hooks()
	newClient(t, cfg)
	victim := servers[1]
	require.NoError(t, victim.Kill())
	kinds := func() []shard.NodeEventKind {
		var out []shard.NodeEventKind
		for _, ev := range rec.snapshot().nodes {
			require.Equal(t, victim.Addr, ev.Node.Addr, "%v", ev)
			out = append(out, ev.Kind)
		}
		return out
	}
	waitFor(t, 10*time.Second, "down and ejected", func() bool { return len(kinds()) >= 2 })
	assert.Equal(t, []shard.NodeEventKind{shard.NodeDown, shard.NodeEjected}, kinds())
	down := rec.snapshot().nodes[0]
	assert.Error(t, down.Err)
	assert.Contains(t, down.String(), "node shard-1 down: ")
	require.NoError(t, victim.Restart())
	waitFor(t, 10*time.Second, "up and restored", func() bool { return len(kinds()) >= 4 })
	assert.Equal(t, []shard.NodeEventKind{shard.NodeDown, shard.NodeEjected, shard.NodeUp, shard.NodeRestored}, kinds())
}

// CheckReplication marks a replica down when its master goes away, where
// PING would still answer.
func TestHealthCheckReplication(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	master, replica := servers[0], servers[1]
	host, port, _ := strings.Cut(master.Addr, ":")
	_, err := replica.Do("REPLICAOF", host, port)
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the replica's link", func() bool {
		info, err := replica.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	rec := &recorder{}
	cfg := ringConfig([]*redistest.Server{replica})
	cfg.Health.Check = shard.CheckReplication
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)

	// Healthy while linked: checks pass (a round trip is recorded only
	// for a check that succeeded).
	waitFor(t, 10*time.Second, "a successful check", func() bool { return c.Stats().Nodes[0].RTT > 0 })
	assert.Empty(t, rec.snapshot().nodes)
	assert.False(t, c.Stats().Nodes[0].Down)

	require.NoError(t, master.Kill())
	waitFor(t, 10*time.Second, "replica marked down", func() bool { return len(rec.snapshot().nodes) > 0 })
	ev := rec.snapshot().nodes[0]
	assert.Equal(t, shard.NodeDown, ev.Kind)
	assert.Equal(t, replica.Addr, ev.Node.Addr)
	assert.ErrorIs(t, ev.Err, shard.ErrReplicaLinkDown)
	// PING still answers: the default check would not have noticed.
	pong, err := replica.Do("PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", pong)
}

// A MOVED is reported as a redirect from the old owner to the new one,
// then as the command that the new owner served; the slot map change is
// reported with the slot that moved.
func TestHooksClusterMovedAndSlotMap(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	rc, c, a, b := clusterAB(t, rec.hooks())
	key, slot := keyInEmptySlot(t, rc, a, "hookmoved")
	assignSlot(t, slot, a, b)
	defer func() {
		direct(t, b.Addr).Do("DEL", key)
		assignSlot(t, slot, b, a)
	}()
	rec.reset()
	_, err := c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	got := rec.snapshot()
	require.Len(t, got.commands, 2, "%+v", got.commands)
	first, second := got.commands[0], got.commands[1]
	assert.Equal(t, shard.OutcomeRedirect, first.Outcome)
	assert.Equal(t, a.Addr, first.Node.Addr)
	assert.Equal(t, "MOVED", first.Redirect.Kind)
	assert.Equal(t, slot, first.Redirect.Slot)
	assert.Equal(t, a.Addr, first.Redirect.From.Addr)
	assert.Equal(t, b.Addr, first.Redirect.To.Addr)
	assert.Equal(t, 0, first.Attempt)
	assert.Equal(t, shard.OutcomeOK, second.Outcome)
	assert.Equal(t, b.Addr, second.Node.Addr)
	assert.Equal(t, 1, second.Attempt)
	require.Len(t, got.ops, 1)
	assert.Equal(t, b.Addr, got.ops[0].Node.Addr)
	assert.Equal(t, 2, got.ops[0].Attempts)

	require.NotEmpty(t, got.slots)
	sm := got.slots[0]
	require.Len(t, sm.Moves, 1)
	assert.Equal(t, a.Addr, sm.Moves[0].From.Addr)
	assert.Equal(t, b.Addr, sm.Moves[0].To.Addr)
	assert.Equal(t, 1, sm.Moves[0].Slots)
	assert.Equal(t, fmt.Sprintf("1 slots moved: %s -> %s (1: %d)", a.Addr, b.Addr, slot), sm.String())

	// An explicit refresh is reported.
	require.NoError(t, c.Refresh(ctx))
	refs := rec.snapshot().refreshes
	require.NotEmpty(t, refs)
	assert.NoError(t, refs[len(refs)-1].Err)
}

// A MOVED inside a pipeline is listed in the part of the node that sent it.
func TestHooksClusterRedirectInPipeline(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	rc, c, a, b := clusterAB(t, rec.hooks())
	key, slot := keyOnMaster(t, rc, a, "hookask")
	migratingSlot(t, slot, a, b)
	other, _ := keyOnMaster(t, rc, a, "hookother")
	rec.reset()
	p := c.Pipeline()
	p.Send("GET", other)
	p.Send("GET", key+"missing")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err)
	got := rec.snapshot()
	require.NotEmpty(t, got.pipelines)
	part := got.pipelines[0]
	assert.Equal(t, a.Addr, part.Node.Addr)
	assert.Equal(t, 2, part.Commands)
	assert.Equal(t, 1, part.Outcomes[shard.OutcomeRedirect])
	require.Len(t, part.Redirects, 1)
	assert.Equal(t, "ASK", part.Redirects[0].Kind)
	assert.Equal(t, b.Addr, part.Redirects[0].To.Addr)
	// The ASK'd command then went to b alone.
	require.Len(t, got.commands, 1)
	assert.Equal(t, b.Addr, got.commands[0].Node.Addr)
	assert.Equal(t, shard.OutcomeOK, got.commands[0].Outcome)
}

// A failover: the dead master is reported down, then its replica
// promoted, in that order, and the slot map change names the promotion.
func TestHooksClusterFailoverEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	rec := &recorder{}
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	victim, err := rc.MasterOfSlot(0)
	require.NoError(t, err)
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	require.NoError(t, victim.Kill())
	// Traffic to the dead master's slots drives the refreshes.
	waitFor(t, 30*time.Second, "replica promoted", func() bool {
		c.Do(context.Background(), "SET", "{failover}0", "v") //nolint:errcheck // failures are expected until the promotion
		for _, ev := range rec.snapshot().nodes {
			if ev.Kind == shard.ReplicaPromoted {
				return true
			}
		}
		return false
	})
	var seq []string
	for _, ev := range rec.snapshot().nodes {
		switch ev.Kind {
		case shard.NodeDown:
			seq = append(seq, "down "+ev.Node.Addr)
		case shard.ReplicaPromoted:
			seq = append(seq, "promoted "+ev.Node.Addr+" for "+ev.Previous.Addr)
		}
	}
	require.GreaterOrEqual(t, len(seq), 2, "%v", seq)
	assert.Equal(t, "down "+victim.Addr, seq[0], "%v", seq)
	assert.Contains(t, seq, "promoted "+replica.Addr+" for "+victim.Addr)
	promoted := false
	for _, sm := range rec.snapshot().slots {
		for _, n := range sm.Promoted {
			promoted = promoted || n.Addr == replica.Addr
		}
	}
	assert.True(t, promoted, "the slot map change lists the promotion")
	_, err = c.Do(context.Background(), "SET", "{failover}0", "v")
	assert.NoError(t, err)
}

// Finish sees the error exactly as Do returns it, also for a command
// refused before anything was sent.
func TestHooksFinishSeesTheReturnedError(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	var got []error
	var mu sync.Mutex
	cfg := ringConfig(servers)
	cfg.Hooks = &shard.Hooks{Finish: func(ctx context.Context, op *shard.Op) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, op.Err)
	}}
	hc := newClient(t, cfg)
	_, err := hc.Do(context.Background(), "MGET", "a", "b")
	require.NoError(t, err)
	_, err = hc.Do(context.Background(), "NOSUCHCOMMAND", "a")
	require.Error(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	assert.NoError(t, got[0])
	assert.True(t, errors.Is(got[1], err) || got[1] == err)
}

// Hooks cost no allocation: the events and operations they receive are
// recycled.
func TestHooksAllocations(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	ctx := context.Background()
	measure := func(h *shard.Hooks) float64 {
		cfg := ringConfig(servers)
		cfg.Hooks = h
		c := newClient(t, cfg)
		_, err := c.Do(ctx, "SET", "alloc:hook", "v")
		require.NoError(t, err)
		return testing.AllocsPerRun(300, func() { c.Do(ctx, "GET", "alloc:hook") })
	}
	none := measure(nil)
	stateOnly := measure(&shard.Hooks{NodeState: func(shard.NodeEvent) {}, SlotMap: func(shard.SlotMapEvent) {}})
	command := measure(&shard.Hooks{Command: func(context.Context, *shard.CommandEvent) {}})
	ops := measure(&shard.Hooks{Finish: func(context.Context, *shard.Op) {}})
	t.Logf("allocations per GET: no hooks %.1f, state hooks %.1f, no-op Command hook %.1f, no-op Finish hook %.1f", none, stateOnly, command, ops)
	slack := 0.0
	if raceDetector {
		slack = 3 // sync.Pool drops recycled batches under -race
	}
	assert.LessOrEqual(t, stateOnly, none+slack)
	assert.LessOrEqual(t, command, none+slack)
	assert.LessOrEqual(t, ops, none+slack)
}

// A pipeline with hooks allocates no more than without.
func TestHooksPipelineAllocations(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	ctx := context.Background()
	measure := func(h *shard.Hooks) float64 {
		cfg := ringConfig(servers)
		cfg.Hooks = h
		// Allocations are counted process-wide: no health checks beside.
		cfg.Health.Interval = -1
		c := newClient(t, cfg)
		p := c.Pipeline()
		run := func() {
			for i := range 30 {
				p.Send("GET", fmt.Sprintf("alloc:pipe:%d", i%10))
			}
			_, err := p.Exec(ctx)
			require.NoError(t, err)
		}
		run()
		return testing.AllocsPerRun(100, run)
	}
	none := measure(nil)
	hooked := measure(&shard.Hooks{
		Start:    func(ctx context.Context, _ *shard.Op) context.Context { return ctx },
		Finish:   func(context.Context, *shard.Op) {},
		Command:  func(context.Context, *shard.CommandEvent) {},
		Pipeline: func(context.Context, *shard.PipelineEvent) {},
	})
	t.Logf("allocations per 30-command pipeline on 3 nodes: no hooks %.1f, no-op hooks %.1f", none, hooked)
	slack := 0.0
	if raceDetector {
		slack = none / 4 // sync.Pool drops recycled buffers at random under -race
	}
	assert.LessOrEqual(t, hooked, none+slack)
}
