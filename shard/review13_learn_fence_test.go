package shard_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// infoHold makes the loopback fronts of holdInfoFront hold a COMMAND
// INFO about one command: the server answers it once the hold is over
// (a server that answers slowly: paused, busy, far away).
type infoHold struct {
	ask   []byte
	hold  time.Duration
	asked chan struct{} // closed when the first such COMMAND INFO arrived
	once  sync.Once
}

func newInfoHold(name string, hold time.Duration) *infoHold {
	return &infoHold{
		ask:   []byte("$4\r\nINFO\r\n$" + strconv.Itoa(len(name)) + "\r\n" + name + "\r\n"),
		hold:  hold,
		asked: make(chan struct{}),
	}
}

// front starts a loopback front to backend that forwards everything both
// ways, a COMMAND INFO about the hold's command only after the hold. It
// returns the front's address; it closes when the test ends.
func (h *infoHold) front(t *testing.T, backend string) string {
	t.Helper()
	return startLoopbackFront(t, backend, func(c, b net.Conn, stop <-chan struct{}) (up, down func()) {
		pipe := func(dst, src net.Conn, hold bool) {
			defer dst.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				if n > 0 {
					// On the loopback a command arrives whole.
					if hold && bytes.Contains(buf[:n], h.ask) {
						h.once.Do(func() { close(h.asked) })
						select {
						case <-time.After(h.hold):
						case <-stop:
							return
						}
					}
					if _, werr := dst.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}
		return func() { pipe(b, c, true) }, func() { pipe(c, b, false) }
	})
}

// learnFenceSetup is a 3 -> 4 ring migration over real servers that know
// STRLEN as r13strlen only (a command the client's table lacks), reached
// through fronts that answer a COMMAND INFO about it after hold.
func learnFenceSetup(t *testing.T, hold *infoHold) *switchSetup {
	t.Helper()
	servers := redistest.StartNTB(t, 4, redistest.Options{Args: []string{"--rename-command", "STRLEN", "R13STRLEN"}})
	fronts := make([]*redistest.Server, len(servers))
	for i, srv := range servers {
		fronts[i] = &redistest.Server{Addr: hold.front(t, srv.Addr)}
	}
	s := &switchSetup{servers: servers, from: ringConfig(fronts[:3]), to: ringConfig(fronts)}
	s.from.Pool.ReadTimeout, s.to.Pool.ReadTimeout = 4*time.Second, 4*time.Second
	return s
}

// TestReview13LearnDoesNotHoldTheSwitch: a command the table does not
// know was planned and counted by the migration's fence (by the old
// topology while the migration waited, or by the new one of a migration
// that a rollback may turn around) before it was learned with COMMAND
// INFO. A server slow to answer that (2s here) kept the switch waiting
// as long: ArmMigration, or the rollback's switch, took the COMMAND
// INFO's time, while the commands on moving keys of every process wait
// at the fence. So did a command sent with DoKey or SendKey, learned
// during a migration to move its keys first. Learning needs no fence: it
// is done before the command is counted.
func TestReview13LearnDoesNotHoldTheSwitch(t *testing.T) {
	const holdTime = 2 * time.Second
	for _, tc := range []struct {
		name     string
		pipeline bool
		rollback bool
		byKey    bool // DoKey, SendKey: learned to move its keys first
	}{
		{"Do/forward", false, false, false},
		{"Pipeline/forward", true, false, false},
		{"Do/rollback", false, true, false},
		{"Pipeline/rollback", true, true, false},
		{"DoKey/rollback", false, true, true},
		{"SendKey/rollback", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			hold := newInfoHold("r13strlen", holdTime)
			s := learnFenceSetup(t, hold)
			c := s.migrating(t, nil)
			if tc.rollback {
				s.fenceAndArm(t, c)
			}
			k := s.moving(t, "r13lf", 1)[0]
			_, err := c.Do(ctx, "SET", k, "hello")
			require.NoError(t, err)
			done := make(chan error, 1)
			got := make(chan int, 1)
			go func() {
				var n int
				var err error
				if tc.pipeline {
					p := c.Pipeline()
					p.Send("GET", k)
					if tc.byKey {
						p.SendKey(k, "R13STRLEN", k)
					} else {
						p.Send("R13STRLEN", k)
					}
					var res []shard.Result
					res, err = p.Exec(ctx)
					if err == nil && len(res) == 2 {
						n, err = redis.Int(res[1].Reply, res[1].Err)
					} else if err == nil {
						err = fmt.Errorf("%d results, want 2", len(res))
					}
				} else if tc.byKey {
					n, err = redis.Int(c.DoKey(ctx, k, "R13STRLEN", k))
				} else {
					n, err = redis.Int(c.Do(ctx, "R13STRLEN", k))
				}
				got <- n
				done <- err
			}()
			select {
			case <-hold.asked:
			case err := <-done:
				t.Fatalf("the command ended without asking COMMAND INFO: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("the command did not ask COMMAND INFO")
			}
			begin := time.Now()
			if tc.rollback {
				require.NoError(t, c.AbortMigration(ctx))
			}
			require.NoError(t, c.ArmMigration()) // the switch
			took := time.Since(begin)
			assert.Less(t, took, holdTime/2, "the switch waited for a COMMAND INFO")
			select {
			case err := <-done:
				require.NoError(t, err, "the learned command")
				assert.Equal(t, 5, <-got)
			case <-time.After(30 * time.Second):
				t.Fatal("the learned command never returned")
			}
			v, err := redis.String(c.Do(ctx, "GETEX", k)) // a write that changes nothing: moves the key
			require.NoError(t, err)
			assert.Equal(t, "hello", v)
			owner := s.to
			if tc.rollback {
				owner = s.from
			}
			frontOwner := ringOwner(t, owner, k)
			i := indexOfAddr(t, owner, frontOwner)
			assert.Equal(t, []string{s.servers[i].Addr}, holders(t, s.servers, k), "held by its owner alone")
		})
	}
}

// indexOfAddr returns the position of addr among cfg's shards.
func indexOfAddr(t *testing.T, cfg shard.Config, addr string) int {
	t.Helper()
	for i, sh := range cfg.Shards {
		if sh.Addr == addr {
			return i
		}
	}
	t.Fatalf("%s is not a shard of the config", addr)
	return -1
}

// A pipeline with a command the servers teach the client and one they do
// not know either: once the first was learned, the pipeline was planned
// again and the second's error no longer said why it stayed unknown (the
// server does not know it), only to name its target with DoKey.
func TestReview13LearnPipelineKeepsWhyUnknown(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{Args: []string{"--rename-command", "STRLEN", "R13STRLEN"}})
	c := newClient(t, ringConfig(servers))
	_, err := c.Do(ctx, "SET", "r13k", "hello")
	require.NoError(t, err)
	p := c.Pipeline()
	p.Send("R13STRLEN", "r13k")
	p.Send("R13NOSUCH", "r13k")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 2)
	n, err := redis.Int(res[0].Reply, res[0].Err)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	require.ErrorIs(t, res[1].Err, shard.ErrUnknownCommand)
	assert.Contains(t, res[1].Err.Error(), "the server does not know it either")
}
