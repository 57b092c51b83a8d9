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

// An INCR planned by the old topology while the migration waits behind its
// fence (counted: the switch waits for it), under a context with a
// deadline, that waits for a pooled connection to its key's old owner
// (MaxActive reached, Wait) for longer than the switch waits, must not run
// at the old owner once a connection frees after the fence was armed and
// the key moved: it would start a fresh counter there, which every later
// read finds first (a lost increment, and a key on two nodes). It fails
// with ErrFenceSwitched, nothing sent, or its increment is seen. Run with
// the automatic pipeline off and on.
func TestReview6WaitingCommandPoolWaitOutlastsTheSwitch(t *testing.T) {
	for _, auto := range []bool{false, true} {
		name := "pooled"
		if auto {
			name = "autopipeline"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSwitchSetup(t, 300*time.Millisecond)
			cfg := s.to
			from := s.from
			cfg.Migration = &shard.Migration{From: &from}
			cfg.Pool.DialTimeout, cfg.Pool.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
			// Two connections per node: the beacon's and the holder's.
			cfg.Pool.MaxActive, cfg.Pool.Wait = 2, true
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			if i, _ := c.Migration(); i.Phase != shard.PhaseWaiting {
				t.Fatalf("phase %v, want waiting", i.Phase)
			}
			var k, oldOwner string
			for _, m := range s.moving(t, "r6wait", 20) {
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
			holder := c.Conn()
			defer holder.Close()
			if _, err := holder.Do("WATCH", k); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				wctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
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
			s.fenceAndArm(t, c)
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
			holder.Close()
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
