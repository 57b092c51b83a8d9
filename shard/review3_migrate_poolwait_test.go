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

// An INCR planned before StartMigration (by the old topology) that waits
// for a pooled connection to its key's old owner (MaxActive reached, Wait)
// across the fence's switch, the arming and its key's move, must not then
// run at the old owner once a connection frees: it would start a fresh
// counter there that every later read misses (a lost increment). It fails
// with ErrFenceSwitched, nothing sent, or its increment is seen. Run with
// the automatic pipeline off (a pooled connection per command) and on (the
// node's pipeline writer waits for the connection).
func TestStartMigrationFencesACommandWaitingForAConnection(t *testing.T) {
	for _, auto := range []bool{false, true} {
		name := "pooled"
		if auto {
			name = "autopipeline"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSwitchSetup(t, 500*time.Millisecond)
			cfg := s.from
			cfg.Pool.MaxActive, cfg.Pool.Wait = 1, true
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			// A key whose old owner is not the node whose connection
			// names the test reads (beaconSays): that one's single
			// connection stays held.
			var k, oldOwner string
			for _, m := range s.moving(t, "r3wait", 20) {
				if o := ringOwner(t, s.from, m); o != s.servers[0].Addr {
					k, oldOwner = m, o
					break
				}
			}
			if k == "" {
				t.Fatal("no moving key off the first server")
			}
			newOwner := ringOwner(t, s.to, k)
			_, err := c.Do(ctx, "SET", k, 10)
			if err != nil {
				t.Fatal(err)
			}
			// Hold the one connection to the old owner: a Conn pinned
			// by WATCH on the key itself.
			holder := c.Conn()
			defer holder.Close()
			if _, err := holder.Do("WATCH", k); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, "INCR", k)
				done <- err
			}()
			// The INCR waits for the connection.
			waitFor(t, 10*time.Second, "the INCR to wait for a connection", func() bool {
				for _, g := range stacks() {
					if strings.Contains(g, "redis.(*Pool).waitVacantConn") {
						return true
					}
				}
				return false
			})
			if err := c.StartMigration(ctx, s.to); err != nil {
				t.Fatal(err)
			}
			s.fenceAndArm(t, c)
			// Another process moves the key and increments it at its new
			// owner.
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
