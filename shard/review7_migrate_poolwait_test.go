package shard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// An INCR planned by the old topology that waits for a pooled connection
// to its key's old owner (MaxActive reached, Wait) across the fence's
// switch, the arming and its key's move, must not then run at the old
// owner once a connection frees: it would start a fresh counter there,
// which every later read misses or finds first (a lost increment, and a
// key on two nodes). It fails with ErrFenceSwitched, nothing sent, or its
// increment is seen. Each case runs with the automatic pipeline off (a
// pooled connection per command) and on (the node's pipeline writer waits
// for the connection).
//
//   - startmigration: a ring client whose INCR was planned before
//     StartMigration; the switch comes with the fence after it.
//   - waiting: a client built with Config.Migration, waiting behind the
//     fence (the INCR is counted: the switch waits for it), whose INCR has
//     a deadline and waits for its connection longer than the switch
//     waits (short dial and write timeouts; two connections per node: the
//     beacon's and the holder's).
func TestReview7MigratePoolWaitOutlastsTheSwitch(t *testing.T) {
	cases := []struct {
		name        string
		readTimeout time.Duration // the switch waits about that long
		runTime     bool          // StartMigration once the INCR waits; else Config.Migration
		maxActive   int
		shortIO     bool // dial and write timeouts of 300ms
		deadline    bool // the INCR's context has a deadline
		prefix      string
	}{
		{name: "startmigration", readTimeout: 500 * time.Millisecond, runTime: true, maxActive: 1, prefix: "r3wait"},
		{name: "waiting", readTimeout: 300 * time.Millisecond, maxActive: 2, shortIO: true, deadline: true, prefix: "r6wait"},
	}
	for _, tc := range cases {
		for _, auto := range []bool{false, true} {
			name := tc.name + "/pooled"
			if auto {
				name = tc.name + "/autopipeline"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				s := newSwitchSetup(t, tc.readTimeout)
				cfg := s.from
				if !tc.runTime {
					cfg = s.to
					from := s.from
					cfg.Migration = &shard.Migration{From: &from}
				}
				if tc.shortIO {
					cfg.Pool.DialTimeout, cfg.Pool.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
				}
				cfg.Pool.MaxActive, cfg.Pool.Wait = tc.maxActive, true
				cfg.DisableAutoPipeline = !auto
				c := newClient(t, cfg)
				if !tc.runTime {
					if i, _ := c.Migration(); i.Phase != shard.PhaseWaiting {
						t.Fatalf("phase %v, want waiting", i.Phase)
					}
				}
				// A key whose old owner is not the first server, whose
				// connection names the test reads (beaconSays).
				var k, oldOwner string
				for _, m := range s.moving(t, tc.prefix, 20) {
					if o := ringOwner(t, s.from, m); o != s.servers[0].Addr {
						k, oldOwner = m, o
						break
					}
				}
				if k == "" {
					t.Fatal("no moving key off the first server")
				}
				newOwner := ringOwner(t, s.to, k)
				if _, err := c.Do(ctx, "SET", k, 10); err != nil {
					t.Fatal(err)
				}
				// Hold the last free connection to the old owner: a Conn
				// pinned by WATCH on the key itself.
				holder := c.Conn()
				defer holder.Close()
				if _, err := holder.Do("WATCH", k); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					wctx := ctx
					if tc.deadline {
						var cancel context.CancelFunc
						wctx, cancel = context.WithTimeout(ctx, time.Minute)
						defer cancel()
					}
					_, err := c.Do(wctx, "INCR", k)
					done <- err
				}()
				waitFor(t, 10*time.Second, "the INCR to wait for a connection", func() bool {
					for _, g := range stacks() {
						if strings.Contains(g, "redis.(*Pool).waitVacantConn") {
							return true
						}
					}
					return false
				})
				if tc.runTime {
					if err := c.StartMigration(ctx, s.to); err != nil {
						t.Fatal(err)
					}
				}
				s.fenceAndArm(t, c)
				// Another process moves the key and increments it at its
				// new owner.
				var oldSrv, newSrv interface {
					Do(args ...string) (string, error)
				}
				for _, srv := range s.servers {
					switch srv.Addr {
					case oldOwner:
						oldSrv = srv
					case newOwner:
						newSrv = srv
					}
				}
				host, port, _ := net.SplitHostPort(newOwner)
				if _, err := oldSrv.Do("MIGRATE", host, port, k, "0", "5000"); err != nil {
					t.Fatal(err)
				}
				if _, err := newSrv.Do("INCR", k); err != nil {
					t.Fatal(err)
				}
				holder.Close() // the INCR gets its connection
				var waitErr error
				select {
				case waitErr = <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the waiting INCR never returned")
				}
				want := 12
				if waitErr != nil {
					if !errors.Is(waitErr, shard.ErrFenceSwitched) {
						t.Fatalf("the waiting INCR: %v, want ErrFenceSwitched or success", waitErr)
					}
					want = 11
				}
				got, err := redis.Int(c.Do(ctx, "GET", k))
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("GET = %d, want %d: the waiting INCR (error %v) was lost", got, want, waitErr)
				}
				if h := holders(t, s.servers, k); len(h) != 1 || h[0] != newOwner {
					t.Errorf("the key sits on %v, want its new owner %s alone", h, newOwner)
				}
			})
		}
	}
}
