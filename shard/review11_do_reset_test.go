package shard_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// requireRefused checks that err is the server's refusal of a value over
// its proto-max-bulk-len, "ERR Protocol error: invalid bulk length", as a
// redis.Error (the type of a server's error reply), and of no unknown
// outcome: the server refused the command, which did not run.
func requireRefused(t *testing.T, err error, what string) {
	t.Helper()
	var re redis.Error
	require.True(t, errors.As(err, &re), "%s: %v, want the server's protocol error", what, err)
	require.Contains(t, string(re), "Protocol error", what)
	var uo *shard.UnknownOutcomeError
	require.False(t, errors.As(err, &uo), "%s: %v", what, err)
}

// requireRefusedOrNotWritten checks that err is the failure of a command
// that did not run because the server reset the connection while it was
// written: the server's refusal, sent before the reset (requireRefused),
// or else the error that says it was not completely written.
func requireRefusedOrNotWritten(t *testing.T, err error, what string) {
	t.Helper()
	var re redis.Error
	if errors.As(err, &re) {
		requireRefused(t, err, what)
		return
	}
	requireNotWritten(t, err, what)
}

// TestReview11DoResetGetsTheServersRefusal: a server refuses a value over
// its proto-max-bulk-len with "-ERR Protocol error: invalid bulk length"
// and resets the connection while the value is still being written. A
// Do of a 32 MB value returned "not run: the connection failed before the
// command was completely written: write ...: connection reset by peer"
// (every round), without the refusal, which was in the socket: the reply
// of the command the write cut short was never read (a transaction's
// is). The refusal must be the error, in ring, cluster and Sentinel mode, through
// the automatic pipeline too, and in a pipeline the SET's result, with
// the INCR before it answered and the one after it not run.
func TestReview11DoResetGetsTheServersRefusal(t *testing.T) {
	big := strings.Repeat("x", 32<<20)
	ctx := context.Background()
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	for _, auto := range []bool{false, true} {
		name := "ring/direct"
		if auto {
			name = "ring/autopipeline"
		}
		t.Run(name, func(t *testing.T) {
			cfg := ringConfig([]*redistest.Server{server})
			cfg.Health.Interval = time.Hour
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			if auto {
				shard.AlwaysPipeline(c)
			}
			for i := range 3 {
				_, err := c.Do(ctx, "SET", "r11do:big", big)
				requireRefused(t, err, "round "+strconv.Itoa(i)+": SET of 32 MB")
			}
			require.False(t, c.Stats().Nodes[0].Down)
			n, err := redis.Int(c.Do(ctx, "INCR", "r11do:n:"+name))
			require.NoError(t, err)
			require.Equal(t, 1, n)
		})
	}
	t.Run("ring/pipeline", func(t *testing.T) {
		cfg := ringConfig([]*redistest.Server{server})
		cfg.Health.Interval = time.Hour
		c := newClient(t, cfg)
		for i := range 3 {
			p := c.Pipeline()
			p.Send("INCR", "r11do:p:before")
			p.Send("SET", "r11do:big", big)
			p.Send("INCR", "r11do:p:after")
			res, err := p.Exec(ctx)
			require.NoError(t, err)
			require.Len(t, res, 3)
			require.NoError(t, res[0].Err, "round %d: INCR written whole before the refused SET", i)
			require.Equal(t, int64(i+1), res[0].Reply, "round %d", i)
			requireRefused(t, res[1].Err, "round "+strconv.Itoa(i)+": SET of 32 MB in a pipeline")
			requireNotWritten(t, res[2].Err, "INCR after the refused SET")
		}
		n, err := server.Do("EXISTS", "r11do:big", "r11do:p:after")
		require.NoError(t, err)
		require.Equal(t, "0", n, "the refused SET, or the INCR after it, ran")
	})
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
		for _, auto := range []bool{false, true} {
			cfg := clusterConfig(cl.Seeds()...)
			cfg.Health.Interval = time.Hour
			cfg.Cluster.MaxRetryWait = 10 * time.Second
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			if auto {
				shard.AlwaysPipeline(c)
			}
			for i := range 3 {
				start := time.Now()
				_, err := c.Do(ctx, "SET", "{r11do}big", big)
				took := time.Since(start)
				requireRefused(t, err, "autopipeline "+strconv.FormatBool(auto)+", round "+strconv.Itoa(i)+": SET of 32 MB")
				require.Less(t, took, 5*time.Second, "the refused SET was sent again")
			}
		}
	})
	t.Run("sentinel", func(t *testing.T) {
		o := sentinelSetOptions(1)
		o.Sentinels = 1
		set := redistest.StartSentinelsTB(t, o)
		master, err := set.Master(0)
		require.NoError(t, err)
		_, err = master.Do("CONFIG", "SET", "proto-max-bulk-len", "1mb")
		require.NoError(t, err)
		for _, auto := range []bool{false, true} {
			cfg := sentinelConfig(set)
			const wait = 20 * time.Second
			cfg.Sentinel.FailoverWait = wait
			cfg.Health.Interval = time.Hour
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			if auto {
				shard.AlwaysPipeline(c)
			}
			for i := range 3 {
				start := time.Now()
				_, err := c.Do(ctx, "SET", "r11do:big", big)
				took := time.Since(start)
				requireRefused(t, err, "autopipeline "+strconv.FormatBool(auto)+", round "+strconv.Itoa(i)+": SET of 32 MB")
				require.Less(t, took, wait/4, "the refused SET was sent again")
			}
			require.Zero(t, c.Stats().Sentinel[0].Failovers)
		}
	})
}

// TestReview11AutoPipelineResetGivesEachCallerItsOutcome: callers whose
// commands the automatic pipeline wrote in one flush with a value the
// server refused (and reset the connection while it was written) each
// get their own outcome: the commands before it their replies, the SET
// the refusal, the commands after it "not run". None is of unknown
// outcome, and every INCR that reported success ran, and no other.
func TestReview11AutoPipelineResetGivesEachCallerItsOutcome(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Health.Interval = time.Hour
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	ctx := context.Background()
	big := strings.Repeat("x", 32<<20)

	var (
		stop              atomic.Bool
		ok, notRun, other atomic.Int64
		mu                sync.Mutex
		odd               []error
		wg                sync.WaitGroup
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_, err := c.Do(ctx, "INCR", "r11ap:n")
				var ne *shard.NodeError
				var uo *shard.UnknownOutcomeError
				switch {
				case err == nil:
					ok.Add(1)
				case errors.As(err, &ne) && !errors.As(err, &uo) && strings.Contains(err.Error(), "not run"):
					notRun.Add(1)
				default:
					other.Add(1)
					mu.Lock()
					odd = append(odd, err)
					mu.Unlock()
				}
			}
		}()
	}
	// The INCRs are under way before each SET, and go on after it.
	waitFor := func(n int64) {
		deadline := time.Now().Add(10 * time.Second)
		for ok.Load()+notRun.Load()+other.Load() < n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	var setErrs []error
	for i := range 5 {
		waitFor(int64(100 * (i + 1)))
		_, err := c.Do(ctx, "SET", "r11ap:big", big)
		setErrs = append(setErrs, err)
	}
	waitFor(ok.Load() + notRun.Load() + other.Load() + 100)
	stop.Store(true)
	wg.Wait()

	t.Logf("INCRs: %d answered, %d not run, %d other", ok.Load(), notRun.Load(), other.Load())
	require.Len(t, setErrs, 5)
	for i, err := range setErrs {
		requireRefused(t, err, "SET "+strconv.Itoa(i))
	}
	mu.Lock()
	assert.Empty(t, odd, "INCRs that neither were answered nor said they did not run")
	mu.Unlock()
	n, err := server.Do("GET", "r11ap:n")
	require.NoError(t, err)
	require.Equal(t, strconv.FormatInt(ok.Load(), 10), n, "INCRs run on the server, against those answered")
	require.False(t, c.Stats().Nodes[0].Down)
}

// statsField returns a field of a server's INFO stats.
func statsField(t *testing.T, s *redistest.Server, field string) int64 {
	t.Helper()
	info, err := s.Do("INFO", "stats")
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in INFO stats", field)
	return 0
}

// TestReview11ClusterWriteResetTwiceFailsAtOnce: a cluster node that
// resets the connection while a command's value is written, with no
// reply (a query over its client-query-buffer-limit: it drops the
// client), refuses the command. The command, not completely written and
// so not run, was sent again (the whole value each time) until
// MaxRetryWait ran out, and then failed with "waited too long for the
// cluster". As on a Sentinel shard, a write reset twice in a row must
// fail at once with the *NodeError that says it did not run; so must a
// transaction (Client.Tx) whose MULTI ... EXEC write the node resets
// twice in a row.
func TestReview11ClusterWriteResetTwiceFailsAtOnce(t *testing.T) {
	const limit = 1 << 20
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--client-query-buffer-limit", "1mb"}})
	key := "{r11cr}big"
	owner, err := cl.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	big := strings.Repeat("x", 32<<20)
	ctx := context.Background()
	for _, name := range []string{"direct", "autopipeline", "Tx"} {
		auto := name == "autopipeline"
		t.Run(name, func(t *testing.T) {
			cfg := clusterConfig(cl.Seeds()...)
			cfg.Health.Interval = time.Hour
			const wait = 20 * time.Second
			cfg.Cluster.MaxRetryWait = wait
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			if auto {
				shard.AlwaysPipeline(c)
			}
			_, err := c.Do(ctx, "SET", "{r11cr}warm", "1")
			require.NoError(t, err)
			before := statsField(t, owner, "total_net_input_bytes")
			conns := statsField(t, owner, "total_connections_received")
			start := time.Now()
			if name == "Tx" {
				_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
					return tx.Queue("SET", key, big)
				})
			} else {
				_, err = c.Do(ctx, "SET", key, big)
			}
			took := time.Since(start)
			read := statsField(t, owner, "total_net_input_bytes") - before
			conns = statsField(t, owner, "total_connections_received") - conns
			t.Logf("after %v, %d bytes read by the node, %d connections: %v", took, read, conns, err)
			requireNotWritten(t, err, "SET over client-query-buffer-limit")
			require.False(t, errors.Is(err, shard.ErrRetryBudget), "%v", err)
			require.Less(t, took, wait/2, "the reset SET was sent again until MaxRetryWait ran out")
			// Each send is dropped once the node has read over its limit
			// (1.5 to 2.5 MB read: a read takes in what the socket
			// holds): two sends, not dozens (84 in 20 s, 144 MB). The
			// connections counted are the two INFO queries' after the
			// first, and the client's new ones: the second send's (and
			// perhaps a topology query's).
			require.Less(t, read, int64(16*limit), "the node read the value more than a few times")
			require.LessOrEqual(t, conns, int64(2+2), "the client dialed the node again and again")

			n, err := redis.Int(c.Do(ctx, "INCR", "{r11cr}n:"+name))
			require.NoError(t, err, "a command after the reset SET")
			require.Equal(t, 1, n)
		})
	}
}
