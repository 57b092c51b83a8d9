package shard_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connSampler polls CLIENT LIST on a server and keeps the most
// connections named name it has seen at once.
type connSampler struct {
	most atomic.Int32
	errs atomic.Int32
	stop chan struct{}
	done chan struct{}
}

func sampleConns(server *redistest.Server, name string) *connSampler {
	s := &connSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			list, err := server.Do("CLIENT", "LIST")
			if err != nil {
				s.errs.Add(1)
				continue
			}
			n := int32(strings.Count(list, "name="+name+" "))
			for {
				cur := s.most.Load()
				if n <= cur || s.most.CompareAndSwap(cur, n) {
					break
				}
			}
		}
	}()
	return s
}

// finish stops sampling and returns the most connections seen.
func (s *connSampler) finish() int {
	close(s.stop)
	<-s.done
	return int(s.most.Load())
}

var clientID = regexp.MustCompile(`id=(\d+) [^\n]* name=(\S+) `)

// killNamed closes every connection of the server named name (CLIENT
// KILL ID), as a proxy or an operator might.
func killNamed(t *testing.T, server *redistest.Server, name string) int {
	t.Helper()
	list, err := server.Do("CLIENT", "LIST")
	require.NoError(t, err)
	n := 0
	for _, m := range clientID.FindAllStringSubmatch(list, -1) {
		if m[2] == name {
			if _, err := server.Do("CLIENT", "KILL", "ID", m[1]); err == nil {
				n++
			}
		}
	}
	return n
}

// burst sends SET and GET from goroutines at once (they share the
// automatic pipeline) and returns the errors.
func burst(c *shard.Client, goroutines, rounds int) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for i := range rounds {
				k := fmt.Sprintf("cap:%d:%d", g, i)
				_, err := c.Do(ctx, "SET", k, i)
				if err == nil {
					_, err = c.Do(ctx, "GET", k)
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
	return errs
}

// loneCallers checks that single commands, a pipeline and a transaction
// from one goroutine are served, each within a deadline.
func loneCallers(t *testing.T, c *shard.Client) {
	t.Helper()
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		v, err := redis.Int(c.Do(ctx, "INCR", "cap:lone"))
		cancel()
		require.NoError(t, err, "lone Do %d", i)
		require.Positive(t, v)
	}
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		p := c.Pipeline()
		p.Send("SET", "cap:p", i)
		p.Send("GET", "cap:p")
		res, err := p.Exec(ctx)
		cancel()
		require.NoError(t, err, "pipeline %d", i)
		require.Len(t, res, 2)
		require.NoError(t, res[1].Err)
		got, err := redis.Int(res[1].Reply, nil)
		require.NoError(t, err)
		assert.Equal(t, i, got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := c.Tx(ctx, []string{"cap:tx"}, func(tx *shard.Tx) error { return tx.Queue("SET", "cap:tx", "1") })
	require.NoError(t, err, "transaction")
	assert.Equal(t, []any{"OK"}, out)
}

// With Pool{MaxActive: 1, Wait: true} the client keeps serving after a
// burst from 16 goroutines (the automatic pipeline used to keep its
// connection while idle, so every later lone Do and Exec waited for it
// forever), and the server never sees more than one connection from it,
// also when connections fail while one is borrowed and health checks run
// (a failure used to replace the pool while a connection was still out,
// so two were open).
func TestMaxActiveOneKeepsServingAfterABurst(t *testing.T) {
	for _, tt := range []struct {
		name   string
		health time.Duration
	}{
		{"without health checks", -1},
		{"with health checks", 50 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := redistest.StartTB(t, redistest.Options{})
			cfg := ringConfig([]*redistest.Server{server})
			cfg.Health.Interval = tt.health
			cfg.Pool.MaxActive = 1
			cfg.Pool.Wait = true
			cfg.Pool.ClientName = "cap1"
			c := newClient(t, cfg)
			sampler := sampleConns(server, "cap1")

			require.Empty(t, burst(c, 16, 100), "a burst within the cap succeeds")
			loneCallers(t, c)

			// Connections fail while borrowed: the server closes them
			// mid-burst.
			done := make(chan []error, 1)
			go func() { done <- burst(c, 16, 300) }()
			killed := 0
			for range 5 {
				time.Sleep(20 * time.Millisecond)
				killed += killNamed(t, server, "cap1")
			}
			errs := <-done
			t.Logf("killed %d connections; %d burst commands failed", killed, len(errs))
			// Health checks bring the node back if the kills marked it down.
			waitFor(t, 5*time.Second, "the node to serve again", func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_, err := c.Do(ctx, "GET", "cap:lone")
				return err == nil
			})
			loneCallers(t, c)
			require.Empty(t, burst(c, 16, 100), "a burst after the failures succeeds")
			loneCallers(t, c)

			most := sampler.finish()
			assert.Zero(t, sampler.errs.Load(), "CLIENT LIST failed")
			assert.Equal(t, 1, most, "connections the server saw at once from a pool capped at 1")
		})
	}
}

// Without Wait, a full pool fails a Get at once. The automatic pipeline
// of a pool capped at one connection hands its connection back only when
// no reply is outstanding, and waits until it is back in the pool before
// borrowing again: it never fails its own callers with a full pool.
func TestMaxActiveWithoutWaitPipelineNeverStarvesItself(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Health.Interval = -1
	cfg.Pool.MaxActive = 1
	cfg.Pool.ClientName = "cap1-nowait"
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c) // every single command through the pipeline
	sampler := sampleConns(server, "cap1-nowait")
	errs := burst(c, 16, 300)
	assert.Empty(t, errs, "commands failed")
	assert.Equal(t, 1, sampler.finish())
}
