package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// txRecorder records what the hooks see of transactions and dedicated
// connections, and whether every event came with the operation's context.
type txRecorder struct {
	recorder
	mu      sync.Mutex
	lostCtx []string // events that did not get Start's context
	opNames []string // Op.Operation() at Finish
}

func (r *txRecorder) txHooks() *shard.Hooks {
	h := r.hooks()
	finish, command, pipeline := h.Finish, h.Command, h.Pipeline
	lost := func(ctx context.Context, what string) {
		if ctx.Value(ctxMark{}) == nil {
			r.mu.Lock()
			r.lostCtx = append(r.lostCtx, what)
			r.mu.Unlock()
		}
	}
	h.Finish = func(ctx context.Context, op *shard.Op) {
		lost(ctx, "finish "+op.Name)
		r.mu.Lock()
		r.opNames = append(r.opNames, op.Operation())
		r.mu.Unlock()
		finish(ctx, op)
	}
	h.Command = func(ctx context.Context, ev *shard.CommandEvent) {
		lost(ctx, "command "+ev.Name)
		command(ctx, ev)
	}
	h.Pipeline = func(ctx context.Context, ev *shard.PipelineEvent) {
		lost(ctx, "pipeline")
		pipeline(ctx, ev)
	}
	return h
}

func (r *txRecorder) clear() {
	r.reset()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lostCtx, r.opNames = nil, nil
}

// A transaction is one operation named MULTI: its WATCH and Do commands
// are command events on its node, its MULTI ... EXEC one pipeline event
// there, secrets hidden; a watched key changed by another client is
// EXEC's server error (ErrTxAborted), on the batch and on the operation.
func TestReview8TxHooks(t *testing.T) {
	rec := &txRecorder{}
	c, servers := hookedRing(t, 2, rec.txHooks())
	ctx := context.Background()
	const key = "txhooked"
	_, err := c.Do(ctx, "SET", key, "0")
	require.NoError(t, err)
	node := holder(t, servers, key)

	t.Run("committed", func(t *testing.T) {
		rec.clear()
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			if _, err := tx.Do("GET", key); err != nil {
				return err
			}
			if err := tx.Queue("SET", key, "1"); err != nil {
				return err
			}
			return tx.Queue("CONFIG", "SET", "masterauth", "s3cret-tx")
		})
		require.NoError(t, err)
		got := rec.snapshot()
		require.Len(t, got.ops, 1, "one operation")
		op := got.ops[0]
		assert.Equal(t, "MULTI", op.Name)
		assert.Equal(t, []string{"MULTI"}, rec.opNames)
		assert.False(t, op.Pipeline)
		assert.Equal(t, node, op.Node.Addr)
		assert.Equal(t, 1, op.Nodes)
		assert.Equal(t, 1, op.Attempts)
		assert.Equal(t, shard.OutcomeOK, op.Outcome)
		assert.NoError(t, op.Err)
		assert.Equal(t, 2, op.Commands, "the queued commands")
		assert.Positive(t, op.Duration)

		require.Len(t, got.commands, 2, "%+v", got.commands)
		for i, name := range []string{"WATCH", "GET"} {
			ev := got.commands[i]
			assert.Equal(t, name, ev.Name)
			assert.Equal(t, node, ev.Node.Addr)
			assert.Equal(t, shard.OutcomeOK, ev.Outcome)
			assert.Positive(t, ev.Duration)
			assert.Equal(t, 1, got.keys[fmt.Sprintf("command %d", i)])
		}
		require.Len(t, got.pipelines, 1)
		pev := got.pipelines[0]
		assert.Equal(t, node, pev.Node.Addr)
		assert.Equal(t, 4, pev.Commands)
		assert.Equal(t, 4, pev.Outcomes[shard.OutcomeOK])
		assert.Equal(t, shard.OutcomeOK, pev.Outcome)
		assert.Positive(t, pev.Duration)
		assert.Equal(t, 1, got.keys["pipeline 0"])

		all := strings.Join(got.stmts, "\n")
		assert.NotContains(t, all, "s3cret-tx")
		assert.Contains(t, all, "WATCH "+key)
		assert.Contains(t, all, "MULTI\nSET "+key+" 1\nCONFIG SET masterauth ?\nEXEC")
		assert.Empty(t, rec.lostCtx)
	})

	t.Run("aborted", func(t *testing.T) {
		rec.clear()
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			if _, err := tx.Do("GET", key); err != nil {
				return err
			}
			// Another client writes the watched key.
			if _, err := direct(t, node).Do("SET", key, "other"); err != nil {
				return err
			}
			return tx.Queue("SET", key, "2")
		})
		require.ErrorIs(t, err, shard.ErrTxAborted)
		got := rec.snapshot()
		require.Len(t, got.ops, 1)
		op := got.ops[0]
		assert.Equal(t, shard.OutcomeServerError, op.Outcome)
		assert.ErrorIs(t, op.Err, shard.ErrTxAborted)
		assert.Equal(t, 1, op.Failed)
		assert.Equal(t, node, op.Node.Addr)
		require.Len(t, got.pipelines, 1)
		pev := got.pipelines[0]
		assert.Equal(t, shard.OutcomeServerError, pev.Outcome)
		assert.ErrorIs(t, pev.Err, shard.ErrTxAborted)
		assert.Equal(t, 2, pev.Outcomes[shard.OutcomeOK], "MULTI and SET were queued")
		assert.Equal(t, 1, pev.Outcomes[shard.OutcomeServerError], "EXEC did not run")
		assert.Empty(t, rec.lostCtx)
	})

	t.Run("error reply and fn's error", func(t *testing.T) {
		rec.clear()
		errMine := errors.New("mine")
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			if _, err := tx.Do("LPUSH", key, "x"); err == nil {
				return errors.New("LPUSH on a string succeeded")
			}
			return errMine
		})
		require.ErrorIs(t, err, errMine)
		got := rec.snapshot()
		require.Len(t, got.commands, 2)
		assert.Equal(t, "LPUSH", got.commands[1].Name)
		assert.Equal(t, shard.OutcomeServerError, got.commands[1].Outcome)
		var re redis.Error
		assert.ErrorAs(t, got.commands[1].Err, &re)
		assert.Empty(t, got.pipelines, "MULTI was not sent")
		require.Len(t, got.ops, 1)
		assert.ErrorIs(t, got.ops[0].Err, errMine)
		assert.Equal(t, shard.OutcomeFailed, got.ops[0].Outcome)
		assert.Zero(t, got.ops[0].Commands)
	})
}

// A transaction that meets MOVED runs again at the new owner: the WATCH
// redirected, then the whole transaction there, in one operation.
func TestReview8TxHooksClusterRedirect(t *testing.T) {
	ctx := context.Background()
	rec := &txRecorder{}
	rc, c, a, b := clusterAB(t, rec.txHooks())
	key, slot := keyInEmptySlot(t, rc, a, "txhookmoved")
	_, err := c.Do(ctx, "EXISTS", key) // the client knows the slot at a
	require.NoError(t, err)
	assignSlot(t, slot, a, b)
	defer func() {
		direct(t, b.Addr).Do("DEL", key)
		assignSlot(t, slot, b, a)
	}()
	rec.clear()
	_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		return tx.Queue("SET", key, "v")
	})
	require.NoError(t, err)
	got := rec.snapshot()
	require.Len(t, got.commands, 2, "%+v", got.commands)
	first, second := got.commands[0], got.commands[1]
	assert.Equal(t, "WATCH", first.Name)
	assert.Equal(t, a.Addr, first.Node.Addr)
	assert.Equal(t, shard.OutcomeRedirect, first.Outcome)
	assert.Equal(t, "MOVED", first.Redirect.Kind)
	assert.Equal(t, slot, first.Redirect.Slot)
	assert.Equal(t, b.Addr, first.Redirect.To.Addr)
	assert.Equal(t, 0, first.Attempt)
	assert.Equal(t, "WATCH", second.Name)
	assert.Equal(t, b.Addr, second.Node.Addr)
	assert.Equal(t, shard.OutcomeOK, second.Outcome)
	assert.Equal(t, 1, second.Attempt)
	require.Len(t, got.pipelines, 1)
	assert.Equal(t, b.Addr, got.pipelines[0].Node.Addr)
	assert.Equal(t, 1, got.pipelines[0].Attempt)
	require.Len(t, got.ops, 1)
	assert.Equal(t, "MULTI", got.ops[0].Name)
	assert.Equal(t, b.Addr, got.ops[0].Node.Addr)
	assert.Equal(t, 2, got.ops[0].Attempts)
	assert.Equal(t, shard.OutcomeOK, got.ops[0].Outcome)
	assert.Empty(t, rec.lostCtx)
}

// A Conn's Do of one command is that command's operation, not a pipeline.
func TestReview8ConnDoHooks(t *testing.T) {
	rec := &txRecorder{}
	c, servers := hookedRing(t, 2, rec.txHooks())
	conn := c.Conn()
	defer conn.Close()

	_, err := conn.Do("SET", "connhooked", "v")
	require.NoError(t, err)
	got := rec.snapshot()
	require.Len(t, got.ops, 1)
	op := got.ops[0]
	assert.Equal(t, "SET", op.Name)
	assert.Equal(t, []string{"SET"}, rec.opNames)
	assert.False(t, op.Pipeline)
	assert.Equal(t, 1, op.Commands)
	assert.Equal(t, holder(t, servers, "connhooked"), op.Node.Addr)
	require.Len(t, got.commands, 1)
	assert.Equal(t, "SET", got.commands[0].Name)
	assert.Equal(t, []string{"SET connhooked v", "SET connhooked v"}, got.stmts)
	assert.Empty(t, rec.lostCtx)

	// Several commands at once stay a pipeline.
	rec.clear()
	require.NoError(t, conn.Send("SET", "connhooked", "w"))
	_, err = conn.Do("GET", "connhooked")
	require.NoError(t, err)
	got = rec.snapshot()
	require.Len(t, got.ops, 1)
	assert.Equal(t, "PIPELINE", got.ops[0].Name)
	assert.True(t, got.ops[0].Pipeline)
	assert.Equal(t, 2, got.ops[0].Commands)
}

// A Conn's transaction reaches the hooks too: a command sent alone on the
// connection its WATCH holds is that command's operation on its node;
// MULTI ... EXEC sent at once is one operation named MULTI with one batch
// on the node, and an EXEC that did not run (a watched key changed) is
// OutcomeServerError with ErrTxAborted, though the Conn answers nil as a
// redigo connection does.
func TestReview8ConnTransactionHooks(t *testing.T) {
	rec := &txRecorder{}
	c, servers := hookedRing(t, 2, rec.txHooks())
	const key = "conntxhooked"
	_, err := c.Do(context.Background(), "SET", key, "0")
	require.NoError(t, err)
	node := holder(t, servers, key)
	conn := c.Conn()
	defer conn.Close()

	rec.clear()
	_, err = conn.Do("WATCH", key)
	require.NoError(t, err)
	_, err = conn.Do("GET", key)
	require.NoError(t, err)
	got := rec.snapshot()
	require.Len(t, got.ops, 2)
	require.Len(t, got.commands, 2)
	for i, name := range []string{"WATCH", "GET"} {
		assert.Equal(t, name, got.ops[i].Name)
		assert.Equal(t, node, got.ops[i].Node.Addr)
		assert.Equal(t, name, got.commands[i].Name)
		assert.Equal(t, node, got.commands[i].Node.Addr)
		assert.Equal(t, shard.OutcomeOK, got.commands[i].Outcome)
	}
	assert.Equal(t, []string{"WATCH", "GET"}, rec.opNames)

	_, err = direct(t, node).Do("SET", key, "other")
	require.NoError(t, err)
	rec.clear()
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("SET", key, "mine", "GET"))
	reply, err := conn.Do("EXEC")
	require.NoError(t, err)
	assert.Nil(t, reply, "aborted: EXEC's nil reply")
	got = rec.snapshot()
	require.Len(t, got.ops, 1)
	op := got.ops[0]
	assert.Equal(t, "MULTI", op.Name)
	assert.Equal(t, []string{"MULTI"}, rec.opNames)
	assert.False(t, op.Pipeline)
	assert.Equal(t, node, op.Node.Addr)
	assert.Equal(t, shard.OutcomeServerError, op.Outcome)
	assert.ErrorIs(t, op.Err, shard.ErrTxAborted)
	assert.Empty(t, got.commands)
	require.Len(t, got.pipelines, 1)
	pev := got.pipelines[0]
	assert.Equal(t, node, pev.Node.Addr)
	assert.Equal(t, 3, pev.Commands)
	assert.Equal(t, 2, pev.Outcomes[shard.OutcomeOK])
	assert.Equal(t, shard.OutcomeServerError, pev.Outcome)
	assert.ErrorIs(t, pev.Err, shard.ErrTxAborted)
	assert.Contains(t, got.stmts, "MULTI\nSET "+key+" mine GET\nEXEC")
	assert.Empty(t, rec.lostCtx)
}

// A transaction whose function panics still ends its operation (a
// tracer's span would stay open otherwise); the panic reaches the caller.
func TestReview8TxHooksFunctionPanics(t *testing.T) {
	rec := &txRecorder{}
	c, servers := hookedRing(t, 1, rec.txHooks())
	assert.PanicsWithValue(t, "review8: Tx", func() {
		_, _ = c.Tx(context.Background(), []string{"txpanic"}, func(tx *shard.Tx) error {
			panic("review8: Tx")
		})
	})
	got := rec.snapshot()
	require.Len(t, got.ops, 1)
	assert.Equal(t, "MULTI", got.ops[0].Name)
	assert.Equal(t, shard.OutcomeFailed, got.ops[0].Outcome)
	require.Error(t, got.ops[0].Err)
	assert.Contains(t, got.ops[0].Err.Error(), "panicked")
	assert.Equal(t, servers[0].Addr, got.ops[0].Node.Addr)
	require.Len(t, got.commands, 1, "the WATCH")
}

// A transaction whose node cannot be reached reports its WATCH as failed
// on that node, as a command that fails fast is, and ends on that node.
func TestReview8TxHooksNodeUnreachable(t *testing.T) {
	rec := &txRecorder{}
	c, servers := hookedRing(t, 1, rec.txHooks())
	require.NoError(t, servers[0].Stop())
	_, err := c.Tx(context.Background(), []string{"txdown"}, func(tx *shard.Tx) error {
		return tx.Queue("SET", "txdown", "v")
	})
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	got := rec.snapshot()
	require.Len(t, got.commands, 1)
	assert.Equal(t, "WATCH", got.commands[0].Name)
	assert.Equal(t, servers[0].Addr, got.commands[0].Node.Addr)
	assert.Equal(t, shard.OutcomeFailed, got.commands[0].Outcome)
	assert.ErrorAs(t, got.commands[0].Err, &ne)
	require.Len(t, got.ops, 1)
	assert.Equal(t, servers[0].Addr, got.ops[0].Node.Addr)
	assert.Equal(t, shard.OutcomeFailed, got.ops[0].Outcome)
	assert.Empty(t, got.pipelines)
}
