package shard_test

import (
	"context"
	"errors"
	"fmt"
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

// stateCase is a command that changes the state of the connection it
// runs on. "K" in args stands for the test's key.
type stateCase struct {
	name    string
	args    []any
	refused bool // Do, DoKey and pipelines refuse it with ErrConnState
}

var stateCases = []stateCase{
	{name: "SSUBSCRIBE", args: []any{"news"}, refused: true},
	{name: "SUBSCRIBE", args: []any{"news"}, refused: true},
	{name: "PSUBSCRIBE", args: []any{"news*"}, refused: true},
	{name: "MONITOR", refused: true},
	{name: "CLIENT", args: []any{"REPLY", "OFF"}, refused: true},
	{name: "CLIENT", args: []any{"reply", "skip"}, refused: true},
	{name: "SELECT", args: []any{1}, refused: true},
	{name: "HELLO", args: []any{3}, refused: true},
	{name: "WATCH", args: []any{"K"}, refused: true},
	{name: "MULTI", refused: true},
	{name: "CLIENT", args: []any{"TRACKING", "ON"}},
	{name: "CLIENT", args: []any{"SETNAME", "intruder"}},
	{name: "CLIENT", args: []any{"NO-EVICT", "ON"}},
	{name: "HELLO", args: []any{2, "AUTH", "alt", "altpw", "SETNAME", "intruder"}},
	{name: "AUTH", args: []any{"alt", "altpw"}},
	{name: "READONLY"},
	{name: "READWRITE"},
	{name: "RESET"},
	{name: "ASKING"},
	{name: "QUIT"},
}

// stateEnv is one mode's servers and clients for the state tests.
type stateEnv struct {
	mode    string
	servers []*redistest.Server // the servers that serve keys
	// baseline: the connections there before the clients were created
	baseline []map[string]bool
	auto     *shard.Client // automatic pipelining, always used
	pooled   *shard.Client // DisableAutoPipeline
}

const stateClientName = "stc"

func stateEnvs(t *testing.T) []stateEnv {
	t.Helper()
	ringServers := redistest.StartNTB(t, 3, redistest.Options{})
	ringCfg := ringConfig(ringServers)
	ringCfg.Pool.ClientName = stateClientName

	rc := clusterForTest(t)
	for _, s := range append(append([]*redistest.Server(nil), ringServers...), rc.Nodes...) {
		_, err := s.Do("ACL", "SETUSER", "alt", "on", ">altpw", "~*", "&*", "+@all")
		require.NoError(t, err)
	}
	clCfg := clusterConfig(rc.Seeds()...)
	clCfg.Pool.ClientName = stateClientName
	var masters []*redistest.Server
	for _, s := range rc.Nodes {
		if r, _ := s.Do("ROLE"); strings.HasPrefix(r, "master") {
			masters = append(masters, s)
		}
	}
	require.Len(t, masters, 3)

	var envs []stateEnv
	for _, m := range []struct {
		name    string
		cfg     shard.Config
		servers []*redistest.Server
	}{{"ring", ringCfg, ringServers}, {"cluster", clCfg, masters}} {
		baseline := clientIDs(t, m.servers)
		auto := newClient(t, m.cfg)
		shard.AlwaysPipeline(auto)
		pcfg := m.cfg
		pcfg.DisableAutoPipeline = true
		envs = append(envs, stateEnv{mode: m.name, servers: m.servers, baseline: baseline, auto: auto, pooled: newClient(t, pcfg)})
	}
	return envs
}

func expand(args []any, key string) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if a == "K" {
			a = key
		}
		out[i] = a
	}
	return out
}

// For each command that changes its connection's state, on a ring and on
// a cluster, with and without automatic pipelining: the command through
// Do, DoKey, a pipeline, Conn and ForEachShard, then 1,000 ordinary
// commands from 8 goroutines to the same node. All of them succeed, and
// no connection of the clients is left subscribed, monitoring, in MULTI,
// tracking, on another database, under another name or user.
func TestStateChangingCommandsLeaveNoStateBehind(t *testing.T) {
	for _, env := range stateEnvs(t) {
		for ci, sc := range stateCases {
			label := strings.TrimSpace(fmt.Sprintf("%s %v", sc.name, sc.args))
			t.Run(env.mode+"/"+label, func(t *testing.T) {
				for _, c := range []struct {
					name string
					c    *shard.Client
				}{{"auto", env.auto}, {"pooled", env.pooled}} {
					key := fmt.Sprintf("{st%d}k", ci)
					args := expand(sc.args, key)

					for _, path := range statePaths {
						t.Run(c.name+"/"+path.name, func(t *testing.T) {
							path.run(t, c.c, sc, key, args)
							// Each path's connection must be clean before
							// the next path could borrow (and so hide) it.
							waitClean(t, env.servers, env.baseline)
							loadNode(t, c.c, key)
							waitClean(t, env.servers, env.baseline)
						})
					}
				}
			})
		}
	}
}

// statePaths are the ways a command reaches a connection.
var statePaths = []struct {
	name string
	run  func(t *testing.T, c *shard.Client, sc stateCase, key string, args []any)
}{
	{"DoKey", func(t *testing.T, c *shard.Client, sc stateCase, key string, args []any) {
		_, err := c.DoKey(context.Background(), key, sc.name, args...)
		if sc.refused {
			require.ErrorIs(t, err, shard.ErrConnState, "DoKey")
			var cse *shard.ConnStateError
			require.ErrorAs(t, err, &cse)
			assert.NotEmpty(t, cse.Hint)
		} else {
			assert.NotErrorIs(t, err, shard.ErrConnState, "DoKey")
		}
	}},
	{"Do", func(t *testing.T, c *shard.Client, sc stateCase, key string, args []any) {
		// Routed by the command's own key, if it has one.
		if _, err := c.Do(context.Background(), sc.name, args...); sc.refused {
			require.ErrorIs(t, err, shard.ErrConnState, "Do")
		}
	}},
	{"pipeline", func(t *testing.T, c *shard.Client, sc stateCase, key string, args []any) {
		p := c.Pipeline()
		p.Send("SET", key, "v")
		p.SendKey(key, sc.name, args...)
		p.Send("GET", key)
		res, err := p.Exec(context.Background())
		require.NoError(t, err)
		require.Len(t, res, 3)
		require.NoError(t, res[0].Err)
		if sc.refused {
			require.ErrorIs(t, res[1].Err, shard.ErrConnState, "pipeline")
			v, err := redis.String(res[2].Reply, res[2].Err)
			require.NoError(t, err)
			assert.Equal(t, "v", v)
		}
	}},
	{"Conn", func(t *testing.T, c *shard.Client, sc stateCase, key string, args []any) {
		conn := c.Conn()
		_, _ = conn.Do(sc.name, args...)
		require.NoError(t, conn.Close())
	}},
	{"ForEachShard", func(t *testing.T, c *shard.Client, sc stateCase, key string, args []any) {
		// The callback's connection is its own, whatever it does with it.
		require.NoError(t, c.ForEachShard(context.Background(), func(ctx context.Context, n shard.Node, conn redis.Conn) error {
			if err := conn.Send(sc.name, args...); err != nil {
				return err
			}
			return conn.Flush()
		}))
	}},
}

// loadNode sends 1,000 SET and GET commands from 8 goroutines, to the
// node of key; every one must succeed.
func loadNode(t *testing.T, c *shard.Client, key string) {
	t.Helper()
	ctx := context.Background()
	tag := key[:strings.IndexByte(key, '}')+1]
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 125; i++ {
				k := fmt.Sprintf("%s:%d:%d", tag, g, i%10)
				want := fmt.Sprint(g*1000 + i)
				var err error
				if i%2 == 0 {
					_, err = c.Do(ctx, "SET", k, want)
				} else {
					var v string
					v, err = redis.String(c.Do(ctx, "GET", fmt.Sprintf("%s:%d:%d", tag, g, (i-1)%10)))
					if err == nil && v != fmt.Sprint(g*1000+i-1) {
						err = fmt.Errorf("GET: got %q, want %d", v, g*1000+i-1)
					}
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of 1000 commands failed; first: %v", len(errs), errs[0])
	}
}

// clientInfo is one line of CLIENT LIST.
type clientInfo map[string]string

func clientList(srv *redistest.Server) ([]clientInfo, error) {
	out, err := srv.Do("CLIENT", "LIST")
	if err != nil {
		return nil, err
	}
	var list []clientInfo
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		ci := clientInfo{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				ci[k] = v
			}
		}
		list = append(list, ci)
	}
	return list, nil
}

// clientIDs returns the ids of the clients connected now, per server.
func clientIDs(t *testing.T, servers []*redistest.Server) []map[string]bool {
	t.Helper()
	out := make([]map[string]bool, len(servers))
	for i, s := range servers {
		list, err := clientList(s)
		require.NoError(t, err)
		out[i] = map[string]bool{}
		for _, ci := range list {
			out[i][ci["id"]] = true
		}
	}
	return out
}

// badClient describes what is wrong with a connection of the clients
// under test, or returns "" for one in the state a fresh one has.
func badClient(ci clientInfo) string {
	var bad []string
	if ci["flags"] != "N" {
		bad = append(bad, "flags="+ci["flags"])
	}
	for k, want := range map[string]string{"db": "0", "sub": "0", "psub": "0", "multi": "-1", "name": stateClientName, "user": "default"} {
		if v, ok := ci[k]; ok && v != want {
			bad = append(bad, k+"="+v)
		}
	}
	if v, ok := ci["ssub"]; ok && v != "0" {
		bad = append(bad, "ssub="+v)
	}
	return strings.Join(bad, " ")
}

// waitClean waits until no connection opened since baseline (other than
// replication links and the harness's own) is in a state a fresh one is
// not in.
func waitClean(t *testing.T, servers []*redistest.Server, baseline []map[string]bool) {
	t.Helper()
	var last string
	deadline := time.Now().Add(10 * time.Second)
	for {
		last = ""
		for i, s := range servers {
			list, err := clientList(s)
			require.NoError(t, err)
			for _, ci := range list {
				if baseline[i][ci["id"]] || ci["cmd"] == "client|list" || strings.ContainsAny(ci["flags"], "SM") {
					continue
				}
				if b := badClient(ci); b != "" {
					last = fmt.Sprintf("%s: client id=%s %s", s.Addr, ci["id"], b)
				}
			}
		}
		if last == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a connection kept its state: %s", last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A nil context is an error, the same one everywhere, never a panic.
func TestNilContextIsAnError(t *testing.T) {
	c, _ := startRing(t, 1)
	var nilCtx context.Context
	_, err := shard.New(nilCtx, ringConfig(nil))
	assert.ErrorIs(t, err, shard.ErrNilContext, "New")
	_, err = c.Do(nilCtx, "GET", "k")
	assert.ErrorIs(t, err, shard.ErrNilContext, "Do")
	_, err = c.DoKey(nilCtx, "k", "GET", "k")
	assert.ErrorIs(t, err, shard.ErrNilContext, "DoKey")
	p := c.Pipeline()
	p.Send("GET", "k")
	_, err = p.Exec(nilCtx)
	assert.ErrorIs(t, err, shard.ErrNilContext, "Pipeline.Exec")
	_, err = c.Tx(nilCtx, []string{"k"}, func(*shard.Tx) error { return nil })
	assert.ErrorIs(t, err, shard.ErrNilContext, "Tx")
	err = c.ForEachShard(nilCtx, func(context.Context, shard.Node, redis.Conn) error { return nil })
	assert.ErrorIs(t, err, shard.ErrNilContext, "ForEachShard")
	err = c.Refresh(nilCtx)
	assert.ErrorIs(t, err, shard.ErrNilContext, "Refresh")
	sc := c.Scan(shard.ScanOptions{})
	assert.False(t, sc.Next(nilCtx))
	assert.ErrorIs(t, sc.Err(), shard.ErrNilContext, "Scan")
	_, err = redis.DoContext(c.Conn(), nilCtx, "GET", "k")
	assert.ErrorIs(t, err, shard.ErrNilContext, "Conn.DoContext")
	_, err = redis.ReceiveContext(c.Conn(), nilCtx)
	assert.ErrorIs(t, err, shard.ErrNilContext, "Conn.ReceiveContext")
	// Subscriptions.
	for name, subscribe := range map[string]func(context.Context) (*shard.Subscription, error){
		"Subscribe":  func(ctx context.Context) (*shard.Subscription, error) { return c.Subscribe(ctx, "ch") },
		"PSubscribe": func(ctx context.Context) (*shard.Subscription, error) { return c.PSubscribe(ctx, "ch*") },
		"SSubscribe": func(ctx context.Context) (*shard.Subscription, error) { return c.SSubscribe(ctx, "ch") },
		"SubscribeKeyspace": func(ctx context.Context) (*shard.Subscription, error) {
			return c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{})
		},
	} {
		_, err = subscribe(nilCtx)
		assert.ErrorIs(t, err, shard.ErrNilContext, name)
	}
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	assert.ErrorIs(t, sub.Subscribe(nilCtx, "ch"), shard.ErrNilContext, "Subscription.Subscribe")
	assert.ErrorIs(t, sub.Unsubscribe(nilCtx, "ch"), shard.ErrNilContext, "Subscription.Unsubscribe")
	assert.ErrorIs(t, sub.Ping(nilCtx, "x"), shard.ErrNilContext, "Subscription.Ping")
	_, err = sub.Receive(nilCtx)
	assert.ErrorIs(t, err, shard.ErrNilContext, "Subscription.Receive")
	assert.Equal(t, "shardis: nil Context", shard.ErrNilContext.Error())
}

// The "no key" error names the tool for the command.
func TestNoKeyErrorNamesTheTool(t *testing.T) {
	c, _ := startRing(t, 1)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		args []any
		want string
	}{
		{"FLUSHALL", nil, "ForEachShard"},
		{"INFO", nil, "ForEachShard"},
		{"DBSIZE", nil, "ForEachShard"},
		{"LASTSAVE", nil, "DoKey"},
	} {
		_, err := c.Do(ctx, tc.name, tc.args...)
		require.ErrorIs(t, err, shard.ErrNoKey, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
	for _, tc := range []struct {
		name string
		args []any
		want string
	}{
		{"MULTI", nil, "Client.Tx"},
		{"EXEC", nil, "Client.Tx"},
		{"WATCH", []any{"k"}, "Client.Tx"},
		{"SUBSCRIBE", []any{"ch"}, "Client.Subscribe"},
		{"SSUBSCRIBE", []any{"ch"}, "SSubscribe"},
		{"MONITOR", nil, "ForEachNode"},
		{"SELECT", []any{2}, "Pool.DB"},
	} {
		_, err := c.Do(ctx, tc.name, tc.args...)
		require.ErrorIs(t, err, shard.ErrConnState, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		assert.True(t, strings.HasPrefix(err.Error(), "shardis: "), err.Error())
	}
}

// A transaction whose function returns early, after WATCH, or that
// changed its connection with tx.Do, leaves nothing behind.
func TestTxLeavesNoStateBehind(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = stateClientName
	cfg.Pool.MaxIdle = 1
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	ctx := context.Background()
	baseline := clientIDs(t, servers)
	early := errors.New("early")
	_, err := c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error { return early })
	require.ErrorIs(t, err, early)
	// Had the connection gone back still watching k, a change of k
	// would abort the next transaction on it, on another key.
	_, err = servers[0].Do("SET", "k", "changed")
	require.NoError(t, err)
	reply, err := c.Tx(ctx, []string{"j"}, func(tx *shard.Tx) error { return tx.Queue("INCR", "j") })
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1)}, reply)
	_, err = c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error {
		_, err := tx.Do("CLIENT", "SETNAME", "intruder")
		return err
	})
	require.NoError(t, err)
	_, err = c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error {
		return tx.Queue("SELECT", 0) // runs inside EXEC (the client's database: another is refused)
	})
	require.NoError(t, err)
	_, err = c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error {
		_, err := tx.Do("MULTI")
		return err
	})
	require.ErrorIs(t, err, shard.ErrConnState)
	waitClean(t, servers, baseline)
	// The next transaction on the same pool works and is really watched.
	_, err = c.Do(ctx, "SET", "k", 1)
	require.NoError(t, err)
	reply, err = c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error { return tx.Queue("INCR", "k") })
	require.NoError(t, err)
	assert.Equal(t, []any{int64(2)}, reply)
}
