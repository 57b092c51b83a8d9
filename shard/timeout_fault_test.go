package shard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultConfig is a one-shard ring config without health checks (their
// PINGs would only add noise to a fault).
func faultConfig(addr string, readTimeout time.Duration) shard.Config {
	return shard.Config{
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: readTimeout, WriteTimeout: time.Second},
		Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "s0", Addr: addr, Weight: 1}},
	}
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A server that sends a 96-byte reply a byte every 100 ms is alive but
// never finishes in time: with ReadTimeout 400 ms every way of sending a
// command gives up within ReadTimeout + 10 %, with a timeout error naming
// the node (it took 9.7 s, over 12 s through the automatic pipeline, when
// the deadline was re-armed before every socket read).
func TestTrickledReplyTimesOutWithinReadTimeout(t *testing.T) {
	const readTimeout = 400 * time.Millisecond
	limit := readTimeout + readTimeout/10
	get := func(c *shard.Client, i int) error {
		_, err := c.Do(context.Background(), "GET", fmt.Sprintf("k%d", i))
		return err
	}
	ways := []struct {
		name     string
		interval time.Duration // between the bytes of a reply
		callers  int
		always   bool // every single command through the automatic pipeline
		mayPass  bool // the first reply may come in time
		send     func(c *shard.Client, i int) error
	}{
		{"pooled Do", 100 * time.Millisecond, 1, false, false, get},
		{"pipeline", 100 * time.Millisecond, 1, false, false, func(c *shard.Client, i int) error {
			p := c.Pipeline()
			for j := range 3 {
				p.Send("GET", fmt.Sprintf("k%d:%d", i, j))
			}
			res, err := p.Exec(context.Background())
			if err != nil {
				return err
			}
			if len(res) != 3 {
				return fmt.Errorf("%d results for 3 commands", len(res))
			}
			for _, r := range res {
				if r.Err == nil {
					return errors.New("a pipelined GET succeeded")
				}
			}
			return res[0].Err
		}},
		{"auto-pipelined callers", 100 * time.Millisecond, 4, true, false, get},
		// "+OK\r\n" a byte every 60 ms: each reply takes 300 ms, in
		// time on its own; a caller queued behind others on the shared
		// connection is still due its reply a read timeout after its
		// command was sent, not after the replies before it.
		{"auto-pipelined callers behind slow replies", 60 * time.Millisecond, 4, true, true, get},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			var reply []byte // the 96-byte default
			if w.mayPass {
				reply = []byte("+OK\r\n")
			}
			// Timing on a loaded machine is noisy: the bound must hold in
			// one of three rounds (a wrong implementation misses it by
			// seconds in every one), and every round must time out.
			for round := 1; ; round++ {
				slowest := trickleRound(t, w.interval, reply, readTimeout, w.callers, w.always, w.mayPass, w.send)
				if slowest < limit || round == 3 {
					assert.Less(t, slowest, limit, "the read timeout bounds the whole reply")
					break
				}
				t.Logf("round %d: the slowest caller took %v; again", round, slowest)
			}
		})
	}
}

// trickleRound runs callers against a new trickling server and returns
// how long the slowest took; every one must fail with a timeout naming
// the node (or, with mayPass, succeed).
func trickleRound(t *testing.T, interval time.Duration, reply []byte, readTimeout time.Duration,
	callers int, always, mayPass bool, send func(c *shard.Client, i int) error) time.Duration {
	tr := redistest.StartTrickler(t, interval, reply)
	c := newClient(t, faultConfig(tr.Addr, readTimeout))
	if always {
		shard.AlwaysPipeline(c)
	}
	var wg sync.WaitGroup
	errs := make([]error, callers)
	took := make([]time.Duration, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			errs[i] = send(c, i)
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	var slowest time.Duration
	for i := range callers {
		slowest = max(slowest, took[i])
		if errs[i] == nil && mayPass {
			continue
		}
		require.Error(t, errs[i], "caller %d", i)
		var ne *shard.NodeError
		assert.ErrorAs(t, errs[i], &ne, "caller %d", i)
		assert.True(t, isTimeout(errs[i]), "caller %d: %v", i, errs[i])
	}
	return slowest
}

// A server that never answers (paused): XREAD and XREADGROUP without
// BLOCK answer at once on a live server, so they keep the read timeout
// (the command table flags them blocking, which used to lift it for the
// whole batch); so does a pipeline that carries one. A blocking command
// waits for its own timeout plus the read timeout.
func TestNonBlockingStreamReadsKeepTheReadTimeout(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	limit := readTimeout + readTimeout/10
	server := redistest.StartTB(t, redistest.Options{})
	_, err := server.Do("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
	require.NoError(t, err)

	ways := []struct {
		name   string
		always bool
		limit  time.Duration
		send   func(ctx context.Context, c *shard.Client) error
	}{
		{"XREAD", false, limit, func(ctx context.Context, c *shard.Client) error {
			_, err := c.Do(ctx, "XREAD", "COUNT", 1, "STREAMS", "s", "0")
			return err
		}},
		{"XREAD auto-pipelined", true, limit, func(ctx context.Context, c *shard.Client) error {
			_, err := c.Do(ctx, "XREAD", "COUNT", 1, "STREAMS", "s", "0")
			return err
		}},
		{"XREADGROUP", false, limit, func(ctx context.Context, c *shard.Client) error {
			_, err := c.Do(ctx, "XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s", ">")
			return err
		}},
		{"pipeline of 100 GETs and an XREAD", false, limit, func(ctx context.Context, c *shard.Client) error {
			p := c.Pipeline()
			for i := range 100 {
				p.Send("GET", fmt.Sprintf("k%d", i))
			}
			p.Send("XREAD", "COUNT", 1, "STREAMS", "s", "0")
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			if len(res) != 101 {
				return fmt.Errorf("%d results for 101 commands", len(res))
			}
			for _, r := range res {
				if r.Err == nil {
					return errors.New("a command succeeded against a paused server")
				}
			}
			return res[100].Err
		}},
		{"BLPOP 1 s", false, time.Second + 2*readTimeout, func(ctx context.Context, c *shard.Client) error {
			_, err := c.Do(ctx, "BLPOP", "list", 1)
			return err
		}},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			c := newClient(t, faultConfig(server.Addr, readTimeout))
			if w.always {
				shard.AlwaysPipeline(c)
			}
			// The bound must hold in one of three rounds (timing on a
			// loaded machine is noisy; a wrong implementation waits for
			// the context's 5 s every time), and every round must time out.
			for round := 1; ; round++ {
				took := pausedRound(t, c, server, w.send)
				if took < w.limit || round == 3 {
					assert.Less(t, took, w.limit, "the read timeout still bounds it")
					break
				}
				t.Logf("round %d took %v; again", round, took)
			}
		})
	}
}

// pausedRound sends a command to the server while it is paused and
// returns how long it took to fail; it must fail with a timeout.
func pausedRound(t *testing.T, c *shard.Client, server *redistest.Server, send func(ctx context.Context, c *shard.Client) error) time.Duration {
	_, err := c.Do(context.Background(), "SET", "k0", "warm") // dial while it answers
	require.NoError(t, err)
	require.NoError(t, server.Pause())
	defer func() { require.NoError(t, server.Resume()) }()
	// A deadline far beyond the read timeout, so that a wrong
	// implementation fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	err = send(ctx, c)
	took := time.Since(start)
	require.Error(t, err)
	assert.True(t, isTimeout(err), "%v", err)
	return took
}
