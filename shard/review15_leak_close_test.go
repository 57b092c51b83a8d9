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
// built: after the client's Close, no goroutine started since may remain
// and no connection named name may remain on servers.
type leakWatch struct {
	before  goleak.Option
	servers []*redistest.Server
	name    string
}

func watchLeaks(servers []*redistest.Server, name string) *leakWatch {
	return &leakWatch{before: goleak.IgnoreCurrent(), servers: servers, name: name}
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

func TestReview15NoLeaksAfterCloseRing(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(t *testing.T, cfg shard.Config, w *leakWatch)
	}{
		{"autoeject with a shard down", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			extra := redistest.StartNTB(t, 1, redistest.Options{})[0]
			cfg.Shards = append(cfg.Shards, cfg.Shards[0])
			cfg.Shards[len(cfg.Shards)-1].Name, cfg.Shards[len(cfg.Shards)-1].Addr = "extra", extra.Addr
			cfg.Health.AutoEject = true
			w.before = goleak.IgnoreCurrent()
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			exercise(t, c)
			require.NoError(t, extra.Kill())
			rr := c.Router().(*shard.RingRouter)
			waitFor(t, 20*time.Second, "the shard ejected", func() bool { return rr.Ejected(len(cfg.Shards) - 1) })
			closeWithin(t, c, 10*time.Second)
		}},
		{"migration unarmed", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			from := cfg
			from.Shards = cfg.Shards[:2]
			c, err := shard.New(ctx, from)
			require.NoError(t, err)
			require.NoError(t, c.StartMigration(ctx, cfg))
			exercise(t, c)
			closeWithin(t, c, 10*time.Second)
		}},
		{"migration armed", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			from := cfg
			from.Shards = cfg.Shards[:2]
			c, err := shard.New(ctx, from)
			require.NoError(t, err)
			p := c.Pipeline()
			for i := 0; i < 200; i++ {
				p.Send("SET", fmt.Sprintf("leak:0:%d", i), i)
			}
			_, err = p.Exec(ctx)
			require.NoError(t, err)
			require.NoError(t, c.StartMigration(ctx, cfg))
			require.NoError(t, c.ArmMigration())
			exercise(t, c)
			_, ok := c.Migration()
			require.True(t, ok, "the migration is still on")
			closeWithin(t, c, 10*time.Second)
		}},
		{"live subscriptions", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			s1, err := c.Subscribe(ctx, "ch:a", "ch:b", "ch:c")
			require.NoError(t, err)
			s2, err := c.PSubscribe(ctx, "pat:*")
			require.NoError(t, err)
			s3, err := c.SSubscribe(ctx, "sch:a", "sch:b")
			require.NoError(t, err)
			_ = s2
			_, err = c.Do(ctx, "PUBLISH", "ch:a", "hello")
			require.NoError(t, err)
			got := make(chan error, 1)
			go func() {
				// Receives until the subscription ends with Close.
				for {
					if _, err := s3.Receive(ctx); err != nil {
						got <- err
						return
					}
				}
			}()
			ch := s1.Channel()
			closeWithin(t, c, 10*time.Second)
			select {
			case err := <-got:
				assert.Error(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("Receive did not return after Close")
			}
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
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			sub, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "KEA"})
			require.NoError(t, err)
			_, err = c.Do(ctx, "SET", "ks:k", "v")
			require.NoError(t, err)
			got := make(chan error, 1)
			go func() {
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
		}},
		{"open Conn", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			conn := c.Conn()
			_, err = conn.Do("SET", "conn:k", "v")
			require.NoError(t, err)
			_, err = conn.Do("WATCH", "conn:k")
			require.NoError(t, err)
			require.NoError(t, conn.Send("GET", "conn:k"))
			closeWithin(t, c, 10*time.Second)
			_, err = conn.Do("GET", "conn:k")
			assert.Error(t, err, "a Conn of a closed client")
		}},
		{"Tx with fn blocked", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
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
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
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
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			fctx, cancel := context.WithCancel(ctx)
			var once sync.Once
			err = c.ForEachShard(fctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
				if _, err := conn.Do("PING"); err != nil {
					return err
				}
				once.Do(cancel)
				<-ctx.Done()
				return ctx.Err()
			})
			assert.ErrorIs(t, err, context.Canceled)
			closeWithin(t, c, 10*time.Second)
		}},
		{"BLPOP in flight", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, "BLPOP", "blpop:k", 0)
				done <- err
			}()
			blockedOn(t, w.servers, w.name, "blpop")
			closeWithin(t, c, 10*time.Second)
			select {
			case err := <-done:
				assert.ErrorIs(t, err, shard.ErrClosed)
			case <-time.After(10 * time.Second):
				t.Fatal("BLPOP did not return after Close")
			}
		}},
		{"BLPOP in flight in a pipeline and a Tx", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
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
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			conn := c.Conn()
			done := make(chan error, 1)
			go func() {
				_, err := conn.Do("BLPOP", "blpop:conn", 0)
				done <- err
			}()
			blockedOn(t, w.servers, w.name, "blpop")
			closeWithin(t, c, 10*time.Second)
			select {
			case err := <-done:
				assert.ErrorIs(t, err, shard.ErrClosed)
			case <-time.After(10 * time.Second):
				t.Fatal("BLPOP on a Conn did not return after Close")
			}
			assert.NoError(t, conn.Close())
		}},
		{"BLPOP in flight in ForEachShard", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				done <- c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
					_, err := redis.DoWithTimeout(conn, 0, "BLPOP", "blpop:each", 0)
					return err
				})
			}()
			blockedOn(t, w.servers, w.name, "blpop")
			closeWithin(t, c, 10*time.Second)
			select {
			case err := <-done:
				assert.ErrorIs(t, err, shard.ErrClosed)
			case <-time.After(10 * time.Second):
				t.Fatal("BLPOP in ForEachShard did not return after Close")
			}
		}},
		{"Close twice", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			exercise(t, c)
			closeWithin(t, c, 10*time.Second)
			closeWithin(t, c, 10*time.Second)
			_, err = c.Do(ctx, "GET", "k")
			assert.ErrorIs(t, err, shard.ErrClosed)
		}},
		{"Close concurrent with commands", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			closeUnderLoad(t, c, "cc")
		}},
		{"Close concurrent with commands mid-migration", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			from := cfg
			from.Shards = cfg.Shards[:2]
			c, err := shard.New(ctx, from)
			require.NoError(t, err)
			require.NoError(t, c.StartMigration(ctx, cfg))
			require.NoError(t, c.ArmMigration())
			closeUnderLoad(t, c, "ccm")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ringConfig(servers)
			name := "leak15-" + strings.ReplaceAll(tc.name, " ", "-")
			cfg.Pool.ClientName = name
			w := watchLeaks(servers, name)
			tc.run(t, cfg, w)
			w.check(t)
		})
	}
}

func TestReview15NoLeaksAfterCloseCluster(t *testing.T) {
	rc := clusterForTest(t)
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(t *testing.T, cfg shard.Config, w *leakWatch)
	}{
		{"replica reads", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			exercise(t, c)
			closeWithin(t, c, 10*time.Second)
		}},
		{"live subscriptions", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			_, err = c.Subscribe(ctx, "lk15:ch:a", "lk15:ch:b")
			require.NoError(t, err)
			_, err = c.PSubscribe(ctx, "lk15:pat:*")
			require.NoError(t, err)
			s3, err := c.SSubscribe(ctx, "lk15:{a}", "lk15:{b}", "lk15:{c}")
			require.NoError(t, err)
			got := make(chan error, 1)
			go func() {
				for {
					if _, err := s3.Receive(ctx); err != nil {
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
		}},
		{"BLPOP in flight", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, "BLPOP", "lk15:blpop", 0)
				done <- err
			}()
			blockedOn(t, w.servers, w.name, "blpop")
			closeWithin(t, c, 10*time.Second)
			select {
			case err := <-done:
				assert.ErrorIs(t, err, shard.ErrClosed)
			case <-time.After(10 * time.Second):
				t.Fatal("BLPOP did not return after Close")
			}
		}},
		{"Close concurrent with commands", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			closeUnderLoad(t, c, "lk15:cc")
		}},
		{"migration from a ring", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			ringServers := redistest.StartNTB(t, 2, redistest.Options{})
			w.servers = append(append([]*redistest.Server(nil), w.servers...), ringServers...)
			from := ringConfig(ringServers)
			from.Pool.ClientName = cfg.Pool.ClientName
			w.before = goleak.IgnoreCurrent()
			c, err := shard.New(ctx, from)
			require.NoError(t, err)
			_, err = c.Subscribe(ctx, "lk15:mig:ch")
			require.NoError(t, err)
			require.NoError(t, c.StartMigration(ctx, cfg))
			require.NoError(t, c.ArmMigration())
			closeUnderLoad(t, c, "lk15:mig")
		}},
		{"Scanner abandoned and ForEachShard cancelled", func(t *testing.T, cfg shard.Config, w *leakWatch) {
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			exercise(t, c)
			sc := c.Scan(shard.ScanOptions{Count: 10})
			require.True(t, sc.Next(ctx))
			fctx, cancel := context.WithCancel(ctx)
			var once sync.Once
			err = c.ForEachNode(fctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
				once.Do(cancel)
				<-ctx.Done()
				return ctx.Err()
			})
			assert.ErrorIs(t, err, context.Canceled)
			closeWithin(t, c, 10*time.Second)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := clusterConfig(rc.Seeds()...)
			name := "leak15c-" + strings.ReplaceAll(tc.name, " ", "-")
			cfg.Pool.ClientName = name
			w := watchLeaks(rc.Nodes, name)
			tc.run(t, cfg, w)
			w.check(t)
		})
	}
}

func TestReview15NoLeaksAfterCloseSentinel(t *testing.T) {
	o := sentinelSetOptions(1)
	set := redistest.StartSentinelsTB(t, o)
	var data []*redistest.Server
	for _, sh := range set.Shards {
		data = append(data, sh.Nodes...)
	}
	ctx := context.Background()
	cfg := sentinelConfig(set)
	cfg.Pool.ClientName = "leak15-sentinel"
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	subsBefore := subscribers(t, set.Sentinels)
	w := watchLeaks(data, cfg.Pool.ClientName)
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	exercise(t, c)
	waitFor(t, 30*time.Second, "the client's Sentinel subscriptions", func() bool {
		return c.Stats().Sentinel[0].Subscribed == len(set.Sentinels)
	})
	sub, err := c.Subscribe(ctx, "sent:ch")
	require.NoError(t, err)
	_ = sub
	closeWithin(t, c, 10*time.Second)
	w.check(t)
	waitFor(t, 15*time.Second, "the client's Sentinel connections to close", func() bool {
		return subscribers(t, set.Sentinels) == subsBefore
	})

	// Closed while commands run.
	cfg.Pool.ClientName = "leak15-sentinel-load"
	w = watchLeaks(data, cfg.Pool.ClientName)
	c, err = shard.New(ctx, cfg)
	require.NoError(t, err)
	closeUnderLoad(t, c, "sl")
	w.check(t)
	waitFor(t, 15*time.Second, "the client's Sentinel connections to close", func() bool {
		return subscribers(t, set.Sentinels) == subsBefore
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
