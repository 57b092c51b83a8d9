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
	"go.uber.org/goleak"
)

// leakWatch is taken once a case's servers run and before its client is
// built: after the client's Close, no goroutine started since may remain,
// no connection named name may remain on servers, and the pub/sub
// connections on sentinels are back to what they were.
type leakWatch struct {
	before    goleak.Option
	servers   []*redistest.Server
	name      string
	sentinels []*redistest.Server
	subs      int
}

func watchLeaks(t *testing.T, servers, sentinels []*redistest.Server, name string) *leakWatch {
	t.Helper()
	w := &leakWatch{servers: servers, name: name, sentinels: sentinels}
	if len(sentinels) > 0 {
		w.subs = subscribers(t, sentinels)
	}
	w.before = goleak.IgnoreCurrent()
	return w
}

// check waits (up to a deadline) until neither a goroutine nor a
// connection of the client is left.
func (w *leakWatch) check(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var err error
	for {
		// Find retries by itself for about a second.
		if err = goleak.Find(w.before); err == nil || time.Now().After(deadline) {
			break
		}
	}
	assert.NoError(t, err, "goroutines left after Close")
	waitFor(t, 15*time.Second, "every connection named "+w.name+" to close", func() bool {
		return clientsNamed(t, w.servers, w.name) == 0
	})
	if len(w.sentinels) > 0 {
		waitFor(t, 15*time.Second, "the client's Sentinel connections to close", func() bool {
			return subscribers(t, w.sentinels) == w.subs
		})
	}
}

// leakCase builds a client from cfg (its name set to the case's), uses it
// and closes it; w is checked afterwards.
type leakCase struct {
	name string
	run  func(t *testing.T, cfg shard.Config, w *leakWatch)
}

// runLeakCases runs each case as a subtest on a config from newCfg, with
// a client name of prefix and the case's name, watching servers and
// sentinels.
func runLeakCases(t *testing.T, prefix string, newCfg func() shard.Config, servers, sentinels []*redistest.Server, cases []leakCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newCfg()
			name := prefix + strings.ReplaceAll(tc.name, " ", "-")
			cfg.Pool.ClientName = name
			w := watchLeaks(t, servers, sentinels, name)
			tc.run(t, cfg, w)
			w.check(t)
		})
	}
}

// subscribers counts the pub/sub connections on servers (Sentinels: the
// only subscribers there are clients).
func subscribers(t *testing.T, servers []*redistest.Server) int {
	t.Helper()
	n := 0
	for _, s := range servers {
		list, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, "flags=P") {
				n++
			}
		}
	}
	return n
}

// blockedOn waits until a connection named name runs cmd on one of servers.
func blockedOn(t *testing.T, servers []*redistest.Server, name, cmd string) {
	t.Helper()
	waitFor(t, 15*time.Second, cmd+" to be in flight", func() bool {
		for _, s := range servers {
			list, err := s.Do("CLIENT", "LIST")
			if err != nil {
				return false
			}
			for _, line := range strings.Split(list, "\n") {
				if strings.Contains(line, "name="+name+" ") && strings.Contains(line, "cmd="+cmd+" ") {
					return true
				}
			}
		}
		return false
	})
}

// closeWithin closes c and fails when Close does not return in time.
func closeWithin(t *testing.T, c *shard.Client, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
	}
}

// newLeakClient builds a client from cfg.
func newLeakClient(t *testing.T, cfg shard.Config) *shard.Client {
	t.Helper()
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	return c
}

// newOnTwoShards builds a client on the first two shards of the ring cfg.
func newOnTwoShards(t *testing.T, cfg shard.Config) *shard.Client {
	t.Helper()
	from := cfg
	from.Shards = cfg.Shards[:2]
	return newLeakClient(t, from)
}

// closeEndsReceive closes c while sub's Receive waits, and fails unless
// Receive returns an error.
func closeEndsReceive(t *testing.T, c *shard.Client, sub *shard.Subscription) {
	t.Helper()
	ctx := context.Background()
	got := make(chan error, 1)
	go func() {
		// Receives until the subscription ends with Close.
		for {
			if _, err := sub.Receive(ctx); err != nil {
				got <- err
				return
			}
		}
	}()
	closeWithin(t, c, 10*time.Second)
	select {
	case err := <-got:
		assert.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Receive did not return after Close")
	}
}

// closeEndsBlocked runs call (a BLPOP, named what) on c, closes c once a
// connection of w's name is blocked in it, and fails unless call returns
// ErrClosed.
func closeEndsBlocked(t *testing.T, c *shard.Client, w *leakWatch, what string, call func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	blockedOn(t, w.servers, w.name, "blpop")
	closeWithin(t, c, 10*time.Second)
	select {
	case err := <-done:
		assert.ErrorIs(t, err, shard.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return after Close", what)
	}
}

// blpopCase closes a client while its Do runs BLPOP on key.
func blpopCase(key string) leakCase {
	return leakCase{"BLPOP in flight", func(t *testing.T, cfg shard.Config, w *leakWatch) {
		c := newLeakClient(t, cfg)
		closeEndsBlocked(t, c, w, "BLPOP", func() error {
			_, err := c.Do(context.Background(), "BLPOP", key, 0)
			return err
		})
	}}
}

// loadCase closes a client while commands run on keys starting with prefix.
func loadCase(prefix string) leakCase {
	return leakCase{"Close concurrent with commands", func(t *testing.T, cfg shard.Config, w *leakWatch) {
		closeUnderLoad(t, newLeakClient(t, cfg), prefix)
	}}
}

// cancelInEach runs each (c.ForEachShard or c.ForEachNode) with a fn that
// pings and then waits for its context, cancelled by the first fn, and
// fails unless each returns context.Canceled.
func cancelInEach(t *testing.T, each func(context.Context, func(context.Context, shard.Node, redis.Conn) error) error) {
	t.Helper()
	fctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	err := each(fctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		if _, err := conn.Do("PING"); err != nil {
			return err
		}
		once.Do(cancel)
		<-ctx.Done()
		return ctx.Err()
	})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestReview15NoLeaksAfterCloseRing(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	ctx := context.Background()
	runLeakCases(t, "leak15-", func() shard.Config { return ringConfig(servers) }, servers, nil, []leakCase{
		{"autoeject with a shard down", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			extra := redistest.StartNTB(t, 1, redistest.Options{})[0]
			cfg.Shards = append(cfg.Shards, cfg.Shards[0])
			cfg.Shards[len(cfg.Shards)-1].Name, cfg.Shards[len(cfg.Shards)-1].Addr = "extra", extra.Addr
			cfg.Health.AutoEject = true
			w.before = goleak.IgnoreCurrent()
			c := newLeakClient(t, cfg)
			exercise(t, c)
			require.NoError(t, extra.Kill())
			rr := c.Router().(*shard.RingRouter)
			waitFor(t, 20*time.Second, "the shard ejected", func() bool { return rr.Ejected(len(cfg.Shards) - 1) })
			closeWithin(t, c, 10*time.Second)
		}},
		{"migration unarmed", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newOnTwoShards(t, cfg)
			require.NoError(t, c.StartMigration(ctx, cfg))
			exercise(t, c)
			closeWithin(t, c, 10*time.Second)
		}},
		{"migration armed", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newOnTwoShards(t, cfg)
			p := c.Pipeline()
			for i := 0; i < 200; i++ {
				p.Send("SET", fmt.Sprintf("leak:0:%d", i), i)
			}
			_, err := p.Exec(ctx)
			require.NoError(t, err)
			require.NoError(t, c.StartMigration(ctx, cfg))
			require.NoError(t, c.ArmMigration())
			exercise(t, c)
			_, ok := c.Migration()
			require.True(t, ok, "the migration is still on")
			closeWithin(t, c, 10*time.Second)
		}},
		{"live subscriptions", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			s1, err := c.Subscribe(ctx, "ch:a", "ch:b", "ch:c")
			require.NoError(t, err)
			_, err = c.PSubscribe(ctx, "pat:*")
			require.NoError(t, err)
			s3, err := c.SSubscribe(ctx, "sch:a", "sch:b")
			require.NoError(t, err)
			_, err = c.Do(ctx, "PUBLISH", "ch:a", "hello")
			require.NoError(t, err)
			ch := s1.Channel()
			closeEndsReceive(t, c, s3)
			deadline := time.After(10 * time.Second)
			for open := true; open; {
				select {
				case _, open = <-ch:
				case <-deadline:
					t.Fatal("Channel not closed after Close")
				}
			}
		}},
		{"keyspace subscription", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			sub, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "KEA"})
			require.NoError(t, err)
			_, err = c.Do(ctx, "SET", "ks:k", "v")
			require.NoError(t, err)
			closeEndsReceive(t, c, sub)
		}},
		{"open Conn", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			conn := c.Conn()
			_, err := conn.Do("SET", "conn:k", "v")
			require.NoError(t, err)
			_, err = conn.Do("WATCH", "conn:k")
			require.NoError(t, err)
			require.NoError(t, conn.Send("GET", "conn:k"))
			closeWithin(t, c, 10*time.Second)
			_, err = conn.Do("GET", "conn:k")
			assert.Error(t, err, "a Conn of a closed client")
		}},
		{"Tx with fn blocked", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			release := make(chan struct{})
			inside := make(chan struct{})
			txDone := make(chan error, 1)
			go func() {
				_, err := c.Tx(ctx, []string{"tx:k"}, func(tx *shard.Tx) error {
					if _, err := tx.Do("GET", "tx:k"); err != nil {
						return err
					}
					close(inside)
					<-release
					return tx.Queue("SET", "tx:k", "v")
				})
				txDone <- err
			}()
			<-inside
			closed := make(chan error, 1)
			go func() { closed <- c.Close() }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				close(release)
				<-closed
				t.Fatal("Close waited for a transaction's fn")
				return
			}
			close(release)
			select {
			case err := <-txDone:
				// A call in flight on a connection of its own finishes
				// (Close's documentation); one cut short says ErrClosed.
				if err != nil {
					assert.ErrorIs(t, err, shard.ErrClosed)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Tx did not return")
			}
		}},
		{"Scanner abandoned", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			exercise(t, c)
			sc := c.Scan(shard.ScanOptions{Count: 10})
			for i := 0; i < 25; i++ {
				require.True(t, sc.Next(ctx))
			}
			closeWithin(t, c, 10*time.Second)
			// The keys of the batch at hand may still come; the next
			// SCAN fails.
			for i := 0; i < 100 && sc.Next(ctx); i++ {
			}
			assert.ErrorIs(t, sc.Err(), shard.ErrClosed, "a scan of a closed client")
		}},
		{"ForEachShard cancelled", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			cancelInEach(t, c.ForEachShard)
			closeWithin(t, c, 10*time.Second)
		}},
		blpopCase("blpop:k"),
		{"BLPOP in flight in a pipeline and a Tx", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			pipeDone, txDone := make(chan error, 1), make(chan error, 1)
			go func() {
				p := c.Pipeline()
				p.Send("SET", "blpop:pipe:other", "v")
				p.Send("BLPOP", "blpop:pipe", 0)
				res, err := p.Exec(ctx)
				if err == nil && len(res) == 2 {
					err = res[1].Err
				}
				pipeDone <- err
			}()
			go func() {
				_, err := c.Tx(ctx, []string{"blpop:tx"}, func(tx *shard.Tx) error {
					_, err := tx.Do("BLPOP", "blpop:tx", 0)
					return err
				})
				txDone <- err
			}()
			waitFor(t, 15*time.Second, "both BLPOPs in flight", func() bool {
				n := 0
				for _, s := range w.servers {
					list, err := s.Do("CLIENT", "LIST")
					if err != nil {
						return false
					}
					n += strings.Count(list, "cmd=blpop ")
				}
				return n == 2
			})
			closeWithin(t, c, 10*time.Second)
			for what, done := range map[string]chan error{"pipeline": pipeDone, "Tx": txDone} {
				select {
				case err := <-done:
					assert.ErrorIs(t, err, shard.ErrClosed, what)
				case <-time.After(10 * time.Second):
					t.Fatalf("BLPOP in a %s did not return after Close", what)
				}
			}
		}},
		{"BLPOP in flight on a Conn", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			conn := c.Conn()
			closeEndsBlocked(t, c, w, "BLPOP on a Conn", func() error {
				_, err := conn.Do("BLPOP", "blpop:conn", 0)
				return err
			})
			assert.NoError(t, conn.Close())
		}},
		{"BLPOP in flight in ForEachShard", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			closeEndsBlocked(t, c, w, "BLPOP in ForEachShard", func() error {
				return c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
					_, err := redis.DoWithTimeout(conn, 0, "BLPOP", "blpop:each", 0)
					return err
				})
			})
		}},
		{"Close twice", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			exercise(t, c)
			closeWithin(t, c, 10*time.Second)
			closeWithin(t, c, 10*time.Second)
			_, err := c.Do(ctx, "GET", "k")
			assert.ErrorIs(t, err, shard.ErrClosed)
		}},
		loadCase("cc"),
		{"Close concurrent with commands mid-migration", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newOnTwoShards(t, cfg)
			require.NoError(t, c.StartMigration(ctx, cfg))
			require.NoError(t, c.ArmMigration())
			closeUnderLoad(t, c, "ccm")
		}},
	})
}

func TestReview15NoLeaksAfterCloseCluster(t *testing.T) {
	rc := clusterForTest(t)
	ctx := context.Background()
	runLeakCases(t, "leak15c-", func() shard.Config { return clusterConfig(rc.Seeds()...) }, rc.Nodes, nil, []leakCase{
		{"replica reads", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
			c := newLeakClient(t, cfg)
			exercise(t, c)
			closeWithin(t, c, 10*time.Second)
		}},
		{"live subscriptions", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			_, err := c.Subscribe(ctx, "lk15:ch:a", "lk15:ch:b")
			require.NoError(t, err)
			_, err = c.PSubscribe(ctx, "lk15:pat:*")
			require.NoError(t, err)
			s3, err := c.SSubscribe(ctx, "lk15:{a}", "lk15:{b}", "lk15:{c}")
			require.NoError(t, err)
			closeEndsReceive(t, c, s3)
		}},
		blpopCase("lk15:blpop"),
		loadCase("lk15:cc"),
		{"migration from a ring", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			ringServers := redistest.StartNTB(t, 2, redistest.Options{})
			w.servers = append(append([]*redistest.Server(nil), w.servers...), ringServers...)
			from := ringConfig(ringServers)
			from.Pool.ClientName = cfg.Pool.ClientName
			w.before = goleak.IgnoreCurrent()
			c := newLeakClient(t, from)
			_, err := c.Subscribe(ctx, "lk15:mig:ch")
			require.NoError(t, err)
			require.NoError(t, c.StartMigration(ctx, cfg))
			require.NoError(t, c.ArmMigration())
			closeUnderLoad(t, c, "lk15:mig")
		}},
		{"Scanner abandoned and ForEachShard cancelled", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			exercise(t, c)
			sc := c.Scan(shard.ScanOptions{Count: 10})
			require.True(t, sc.Next(ctx))
			cancelInEach(t, c.ForEachNode)
			closeWithin(t, c, 10*time.Second)
		}},
	})
}

func TestReview15NoLeaksAfterCloseSentinel(t *testing.T) {
	o := sentinelSetOptions(1)
	set := redistest.StartSentinelsTB(t, o)
	var data []*redistest.Server
	for _, sh := range set.Shards {
		data = append(data, sh.Nodes...)
	}
	ctx := context.Background()
	newCfg := func() shard.Config {
		cfg := sentinelConfig(set)
		cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
		return cfg
	}
	runLeakCases(t, "leak15s-", newCfg, data, set.Sentinels, []leakCase{
		{"subscriptions", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c := newLeakClient(t, cfg)
			exercise(t, c)
			waitFor(t, 30*time.Second, "the client's Sentinel subscriptions", func() bool {
				return c.Stats().Sentinel[0].Subscribed == len(set.Sentinels)
			})
			_, err := c.Subscribe(ctx, "sent:ch")
			require.NoError(t, err)
			closeWithin(t, c, 10*time.Second)
		}},
		loadCase("sl"),
	})
}

// closeUnderLoad closes c while 8 goroutines
// run commands, pipelines and transactions on keys starting with prefix:
// Close returns, and every call fails with ErrClosed from some point on.
func closeUnderLoad(t *testing.T, c *shard.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	var ops sync.WaitGroup
	ops.Add(8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			started := false
			for i := 0; ; i++ {
				var err error
				key := fmt.Sprintf("%s:{%d}", prefix, g)
				switch i % 4 {
				case 0:
					_, err = c.Do(ctx, "SET", fmt.Sprintf("%s:%d:%d", prefix, g, i), i)
				case 1:
					_, err = c.Do(ctx, "MGET", prefix+":0:0", prefix+":1:0", prefix+":2:0")
				case 2:
					p := c.Pipeline()
					p.Send("GET", prefix+":0:0")
					p.Send("GET", prefix+":1:0")
					_, err = p.Exec(ctx)
				case 3:
					_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error { return tx.Queue("INCR", key) })
				}
				if !started {
					started = true
					ops.Done()
				}
				if err != nil {
					if !errors.Is(err, shard.ErrClosed) {
						errs <- fmt.Errorf("call kind %d: %w", i%4, err)
					}
					return
				}
			}
		}(g)
	}
	ops.Wait()
	closeWithin(t, c, 10*time.Second)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a call at Close failed with %v, not ErrClosed", err)
	}
}
