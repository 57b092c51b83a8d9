package shard_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// errTextPrefixes are the package prefixes of the library's error texts:
// each may start the text of an error once, however many layers wrap it
// (the outer layers add context words, as os.PathError does).
var errTextPrefixes = []string{"shardis:", "sentinel:", "pool:", "cluster:"}

// TestReview11ErrorTextPrefixOnce provokes the main wrapped failures
// against real servers and checks that their text names the package once
// and keeps its context words, and that errors.Is and errors.As still
// find the same errors in the chain.
func TestReview11ErrorTextPrefixOnce(t *testing.T) {
	ctx := context.Background()
	const password = "errtext-secret-Pw1"
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, SentinelPassword: sentPW})
	locked := redistest.StartTB(t, redistest.Options{DefaultPassword: password})
	plain := redistest.StartTB(t, redistest.Options{})
	gone := redistest.StartTB(t, redistest.Options{})
	goneAddr := gone.Addr
	if err := gone.Stop(); err != nil {
		t.Fatal(err)
	}
	quick := pool.Options{DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second}
	wrongPW := quick
	wrongPW.Password = "wrong-" + password

	newErr := func(cfg shard.Config) func(*testing.T) error {
		return func(*testing.T) error {
			c, err := shard.New(ctx, cfg)
			if err == nil {
				c.Close()
			}
			return err
		}
	}
	sentinelShards := func(addrs []string, master string) shard.Config {
		cfg := sentinelConfig(set)
		cfg.Sentinel.Addrs = addrs
		cfg.Shards = []ring.Shard{{Name: "shard-0", Weight: 1}}
		cfg.Sentinel.Shards = []shard.SentinelShard{{Name: "shard-0", MasterName: master}}
		return cfg
	}
	for _, tt := range []struct {
		name  string
		make  func(t *testing.T) error
		is    []error
		as    func(error) bool
		words []string // context words that must stay
	}{
		{
			name: "Sentinel discovery, every Sentinel down",
			make: newErr(sentinelShards([]string{goneAddr}, set.Names()[0])),
			is:   []error{sentinel.ErrNoSentinel},
			as:   func(err error) bool { var se *sentinel.SetError; return errors.As(err, &se) },
			words: []string{"Sentinel discovery", "Sentinel shard shard-0", "no usable answer from the Sentinels",
				"sentinel " + goneAddr, "connect: connection refused"},
		},
		{
			name:  "Sentinel shard with an unknown master name",
			make:  newErr(sentinelShards(set.Addrs(), "no-such-master")),
			is:    []error{sentinel.ErrNoSentinel, sentinel.ErrUnknownMaster},
			as:    func(err error) bool { var qe *sentinel.QueryError; return errors.As(err, &qe) },
			words: []string{"Sentinel discovery", "Sentinel shard shard-0", `master "no-such-master"`, "unknown master name"},
		},
		{
			name:  "cluster seed refused",
			make:  newErr(shard.Config{Mode: shard.ModeCluster, Seeds: []string{goneAddr}, Pool: quick}),
			is:    []error{syscall.ECONNREFUSED},
			as:    func(err error) bool { var de *pool.DialError; return errors.As(err, &de) },
			words: []string{"cluster discovery", "\nseed " + goneAddr + ": dial " + goneAddr + ": dial tcp"},
		},
		{
			name:  "auth refused through a cluster client",
			make:  newErr(shard.Config{Mode: shard.ModeCluster, Seeds: []string{locked.Addr}, Pool: wrongPW}),
			is:    []error{pool.ErrAuth},
			as:    func(err error) bool { var ae *pool.AuthError; return errors.As(err, &ae) },
			words: []string{"cluster discovery", "auth as default on " + locked.Addr + " failed"},
		},
		{
			name: "auth refused through a ring client",
			make: func(*testing.T) error {
				c, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: locked.Addr, Weight: 1}}, Pool: wrongPW})
				if err != nil {
					return err
				}
				defer c.Close()
				_, err = c.Do(ctx, "GET", "errtext:k")
				return err
			},
			is:    []error{pool.ErrAuth},
			as:    func(err error) bool { var ne *shard.NodeError; return errors.As(err, &ne) },
			words: []string{"node " + locked.Addr, "auth as default on " + locked.Addr + " failed"},
		},
		{
			name: "migration refused: the new cluster cannot be discovered",
			make: func(*testing.T) error {
				c, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: plain.Addr, Weight: 1}}, Pool: quick})
				if err != nil {
					return err
				}
				defer c.Close()
				return c.StartMigration(ctx, shard.Config{Mode: shard.ModeCluster, Seeds: []string{goneAddr}, Pool: quick})
			},
			is:    []error{shard.ErrMigration},
			as:    func(err error) bool { var de *pool.DialError; return errors.As(err, &de) },
			words: []string{"migration", "discovering the cluster", "dial " + goneAddr},
		},
		{
			name: "migration refused: a bad new configuration",
			make: func(*testing.T) error {
				c, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: plain.Addr, Weight: 1}}, Pool: quick})
				if err != nil {
					return err
				}
				defer c.Close()
				return c.StartMigration(ctx, shard.Config{Shards: []ring.Shard{{Addr: plain.Addr, Weight: 1}, {Addr: plain.Addr, Weight: 1}}, Pool: quick})
			},
			is:    []error{shard.ErrMigration, shard.ErrBadConfig},
			words: []string{"both have address " + plain.Addr},
		},
		{
			name: "a plain-text client on a TLS port",
			make: func(t *testing.T) error {
				tlsOnly := redistest.StartTB(t, redistest.Options{TLS: true})
				named := quick
				named.ClientName = "errtext" // a setup command meets the closed connection
				c := newClient(t, shard.Config{Shards: []ring.Shard{{Addr: tlsOnly.Addr, Weight: 1}}, Pool: named})
				_, err := c.Do(ctx, "GET", "errtext:k")
				return err
			},
			is:    []error{pool.ErrClosedBeforeReply},
			as:    func(err error) bool { var de *pool.DialError; return errors.As(err, &de) },
			words: []string{"node ", ": dial ", ": the server closed the connection before its first reply"},
		},
		{
			name: "a plain-text client with a password on a TLS port",
			make: func(t *testing.T) error {
				tlsOnly := redistest.StartTB(t, redistest.Options{TLS: true})
				withPW := quick
				withPW.Password = password // AUTH meets the closed connection
				c := newClient(t, shard.Config{Shards: []ring.Shard{{Addr: tlsOnly.Addr, Weight: 1}}, Pool: withPW})
				_, err := c.Do(ctx, "GET", "errtext:k")
				return err
			},
			is:    []error{pool.ErrClosedBeforeReply},
			as:    func(err error) bool { var de *pool.DialError; return errors.As(err, &de) },
			words: []string{"node ", ": dial ", ": AUTH: the server closed the connection before its first reply"},
		},
		{
			name: "every shard of a ring down",
			make: func(t *testing.T) error {
				c, _ := allEjectedRing(t)
				_, err := c.Do(ctx, "GET", "errtext:k")
				return err
			},
			is:    []error{shard.ErrNoNodes, shard.ErrNodeDown},
			as:    func(err error) bool { var ne *shard.NodeError; return errors.As(err, &ne) },
			words: []string{"no node available: every shard is down: node shard-0 (", "\nnode shard-1 ("},
		},
		{
			name: "a blocking command cut short by the caller's deadline",
			make: func(t *testing.T) error {
				c := newClient(t, shard.Config{Shards: []ring.Shard{{Addr: plain.Addr, Weight: 1}}, Pool: quick})
				dctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				_, err := c.Do(dctx, "BLPOP", "errtext:empty", 0)
				return err
			},
			is:    []error{context.DeadlineExceeded},
			as:    func(err error) bool { var ne *shard.NodeError; return errors.As(err, &ne) },
			words: []string{"node " + plain.Addr, "context deadline exceeded before the reply came (the command may have run): "},
		},
		{
			name: "a write cut short by the caller's deadline on a stalled server",
			make: func(t *testing.T) error {
				stalled := redistest.StartTB(t, redistest.Options{})
				c := newClient(t, shard.Config{Shards: []ring.Shard{{Addr: stalled.Addr, Weight: 1}}, Pool: quick})
				if _, err := c.Do(ctx, "GET", "errtext:k"); err != nil {
					t.Fatal(err)
				}
				if err := stalled.Pause(); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := stalled.Resume(); err != nil {
						t.Error(err)
					}
				}()
				dctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				// Far more than the socket buffers take: the write blocks.
				_, err := c.Do(dctx, "SET", "errtext:big", strings.Repeat("x", 32<<20))
				return err
			},
			is:    []error{context.DeadlineExceeded},
			as:    func(err error) bool { var ne *shard.NodeError; return errors.As(err, &ne) },
			words: []string{"node ", "context deadline exceeded ("},
		},
		{
			name: "a blocking command cut off by a migration's switch",
			make: func(t *testing.T) error {
				s := newSwitchSetup(t, 2*time.Second)
				c := newClient(t, s.from)
				k := s.moving(t, "errtext:queue", 1)[0]
				done := blockedBLPOP(t, c, k, serversByAddr(s.servers)[ringOwner(t, s.from, k)], "the BLPOP to block at the old owner")
				if err := c.StartMigration(ctx, s.to); err != nil {
					t.Fatal(err)
				}
				s.fenceAndArm(t, c)
				select {
				case r := <-done:
					return r.err
				case <-time.After(20 * time.Second):
					t.Fatal("the BLPOP is still blocked at the old owner")
					return nil
				}
			},
			is:    []error{shard.ErrFenceSwitched},
			words: []string{"cut off by the switch while running at the old owner (it may have run): node "},
		},
		{
			name: "a Sentinel shard's master and Sentinels down",
			make: func(t *testing.T) error {
				o := sentinelSetOptions(1)
				o.Sentinels = 1
				down := redistest.StartSentinelsTB(t, o)
				cfg := sentinelConfig(down)
				cfg.Sentinel.FailoverWait = time.Second
				c := newClient(t, cfg)
				if _, err := c.Do(ctx, "SET", "errtext:k", "1"); err != nil {
					t.Fatal(err)
				}
				if err := down.Sentinels[0].Kill(); err != nil {
					t.Fatal(err)
				}
				m, err := down.Master(0)
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Kill(); err != nil {
					t.Fatal(err)
				}
				_, err = c.Do(ctx, "SET", "errtext:k", "2")
				return err
			},
			is:    []error{shard.ErrRetryBudget, sentinel.ErrNoSentinel, shard.ErrNodeDown},
			as:    func(err error) bool { var ne *shard.NodeError; return errors.As(err, &ne) },
			words: []string{"SET: gave up after", "last: node shard-0", "the Sentinels named none: Sentinel shard shard-0: sentinel: no usable answer"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.make(t)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Logf("%s", msg)
			if !strings.HasPrefix(msg, "shardis: ") {
				t.Errorf("%q does not start with \"shardis: \"", msg)
			}
			for _, p := range errTextPrefixes {
				if n := strings.Count(msg, p); n > 1 {
					t.Errorf("%q appears %d times in %q, want at most once", p, n, msg)
				}
			}
			for _, w := range tt.words {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lost the context %q", msg, w)
				}
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("%q does not match %v with errors.Is", msg, target)
				}
			}
			if tt.as != nil && !tt.as(err) {
				t.Errorf("%q: errors.As does not find the expected type", msg)
			}
			if strings.Contains(msg, password) {
				t.Errorf("%q shows the password", msg)
			}
		})
	}
}
