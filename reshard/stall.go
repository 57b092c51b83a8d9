package reshard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// stallAfter is how long a live MIGRATE of keys (n of them) may go
// without the new node receiving anything of it, or answering any of it:
// MIGRATE's timeout bounds each of its I/O operations, so once the new
// node has taken the whole batch and answered it, a live old node reads
// the answers (SELECT's, AUTH's, one per key) within a Timeout each, or
// fails with IOERR and answers the mover; before that, it writes the
// next part of the payload within a Timeout, or fails.
func (m *mover) stallAfter(n int) time.Duration {
	return time.Duration(n+3)*m.opts.Timeout + time.Second
}

// stallPoll is how often the new node is asked how far a watched MIGRATE
// has come.
func (m *mover) stallPoll() time.Duration {
	return min(max(m.opts.Timeout/2, 50*time.Millisecond), time.Second)
}

// watchedMigrate runs do (a MIGRATE of n keys from src to dst, waited for
// up to wait) on conn, or, when wait is longer than a live MIGRATE of n
// keys can go without the new node seeing any of it (stallAfter: a batch
// of large values, waited for a Timeout per 64 KiB), on a connection of
// its own to src while the new node is watched: the old node serves
// nothing else during a MIGRATE (no PING of it can tell a hung node from
// a busy one), but a live MIGRATE keeps its connection at the new node
// reading or writing (CLIENT LIST's idle: watchNewNode). When the new
// node, answering, shows no such connection active for stallAfter, the
// old node is hung (SIGSTOP, a frozen VM): the MIGRATE's connection is
// closed and the error wraps ErrOldNodeStalled, after seconds rather than
// hours. A new node that does not answer the watch proves nothing: the
// wait then stays bounded by wait alone.
func (m *mover) watchedMigrate(ctx context.Context, conn redis.Conn, src, dst shard.Node, n int, wait time.Duration, do func(redis.Conn) error) error {
	quiet := m.stallAfter(n)
	if wait <= quiet+m.stallPoll() {
		return do(conn)
	}
	// A second connection to the old node, which a pool at its
	// MaxActive may not give (with Wait, not at once): then the MIGRATE
	// runs unwatched, as before.
	bctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	c, abort, err := m.pools.GetAbortable(bctx, src.Addr, false)
	cancel()
	if err != nil {
		return do(conn)
	}
	defer c.Close()
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var stalled time.Duration // set before abort, read after wg.Wait
	wg.Add(1)
	go func() {
		defer wg.Done()
		if d, ok := m.watchNewNode(wctx, dst, quiet); ok {
			stalled = d
			abort()
		}
	}()
	err = do(c)
	stop()
	wg.Wait()
	if stalled > 0 {
		return &shard.NodeError{Node: src, Err: fmt.Errorf("%w: MIGRATE of %d keys to %s: the new node saw no activity of it for %v, which a live MIGRATE of Timeout %v does not allow (the old node stopped, or its host froze); the keys are at the old node or, those it moved, at the new one: run the mover again once the old node answers (%w)",
			ErrOldNodeStalled, n, dst, stalled.Round(time.Millisecond), m.opts.Timeout, err)}
	}
	return err
}

// probeBytes is the size of the request INFO stats that watchNewNode
// sends ("*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n"), which the new node's
// total_net_input_bytes counts.
const probeBytes = 25

// watchNewNode asks new node dst every stallPoll until ctx ends how long
// ago the old nodes' MIGRATE connections last read or wrote (CLIENT LIST:
// migrateIdle), and reports, once none has for quiet or longer, how long.
// Other clients' traffic at the new node does not count: a production
// load there kept a hung old node from being found out when the watch
// read the node's totals. A MIGRATE to dst from another old node does
// count (its connection looks the same), which only delays the finding.
// CLIENT LIST costs the new node time in proportion to its connections,
// once per stallPoll, and only while a MIGRATE of large values runs.
//
// A new node that refuses CLIENT LIST (a user not allowed it) is watched
// by its totals instead (INFO stats: bytes read, commands run), which
// any client's traffic moves.
func (m *mover) watchNewNode(ctx context.Context, dst shard.Node, quiet time.Duration) (time.Duration, bool) {
	t := time.NewTicker(m.stallPoll())
	defer t.Stop()
	var dconn redis.Conn
	defer func() {
		if dconn != nil {
			dconn.Close()
		}
	}()
	byTotals := false
	var last [2]int64   // by totals: input bytes, commands: the baseline
	var since time.Time // the latest moment the MIGRATE may have been active
	for {
		select {
		case <-ctx.Done():
			return 0, false
		case <-t.C:
		}
		if dconn == nil {
			bctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
			c, err := m.pools.Get(bctx, dst.Addr)
			cancel()
			if err != nil {
				continue
			}
			dconn, since = c, time.Time{}
		}
		if !byTotals {
			idle, err := migrateIdle(ctx, dconn, m.opts.Timeout)
			now := time.Now() // after the answer: the node may have answered late
			var re redis.Error
			switch {
			case errors.As(err, &re):
				byTotals, since = true, time.Time{}
				continue
			case err != nil:
				// Nothing is known: a fresh connection and a fresh
				// baseline on the next round.
				dconn.Close()
				dconn = nil
				continue
			}
			if since.IsZero() {
				since = now
			}
			for _, s := range idle {
				// idle counts whole seconds between the server's clock
				// readings: the connection may have been active up to a
				// second less long ago.
				if at := now.Add(-max(s-time.Second, 0)); at.After(since) {
					since = at
				}
			}
			if d := now.Sub(since); d >= quiet {
				return d, true
			}
			continue
		}
		now := time.Now()
		cur, err := newNodeActivity(ctx, dconn, m.opts.Timeout)
		if err != nil {
			dconn.Close()
			dconn = nil
			continue
		}
		if since.IsZero() || cur[0]-last[0] > probeBytes || cur[1]-last[1] > 1 {
			last, since = cur, now
			continue
		}
		last = cur
		if d := now.Sub(since); d >= quiet {
			return d, true
		}
	}
}

// migrateIdle returns, for each connection on the new node (conn) that
// a MIGRATE may be using, how long it has gone without reading or
// writing (CLIENT LIST's idle), waiting up to timeout, or until ctx ends.
// MIGRATE's connections are unnamed, and the last command they ran is
// AUTH, SELECT (which MIGRATE sends first, before its payload), RESTORE
// or RESTORE-ASKING; the mover's own connections are named, and a
// production client's last command is another (or, between its AUTH and
// its next command, the connection's idle counts that client's wait).
// The error is a redis.Error when the node refuses CLIENT LIST.
func migrateIdle(ctx context.Context, conn redis.Conn, timeout time.Duration) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, err := redis.String(redis.DoContext(conn, ctx, "CLIENT", "LIST", "TYPE", "normal"))
	if err != nil {
		return nil, err
	}
	return parseMigrateIdle(text)
}

// maxIdleSeconds is the longest idle time in seconds that a
// time.Duration holds; a longer one (a server's reply cannot be trusted
// to be sane) counts as that long rather than wrapping to a negative
// duration, which would read as activity.
const maxIdleSeconds = math.MaxInt64 / int64(time.Second)

// parseMigrateIdle is migrateIdle's reading of a CLIENT LIST reply.
func parseMigrateIdle(text string) ([]time.Duration, error) {
	var out []time.Duration
	for line := range strings.SplitSeq(text, "\n") {
		var name, cmd, idle string
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "name":
				name = v
			case "cmd":
				cmd = v
			case "idle":
				idle = v
			}
		}
		switch cmd {
		case "auth", "select", "restore", "restore-asking":
		default:
			continue
		}
		if name != "" {
			continue
		}
		s, err := strconv.ParseInt(idle, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("CLIENT LIST idle=%q: %w", idle, err)
		}
		s = min(max(s, 0), maxIdleSeconds)
		out = append(out, time.Duration(s)*time.Second)
	}
	return out, nil
}

// newNodeActivity returns the new node's total_net_input_bytes and
// total_commands_processed (INFO stats), waiting up to timeout, or until
// ctx ends.
func newNodeActivity(ctx context.Context, conn redis.Conn, timeout time.Duration) ([2]int64, error) {
	var out [2]int64
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, err := redis.String(redis.DoContext(conn, ctx, "INFO", "stats"))
	if err != nil {
		return out, err
	}
	found := 0
	for line := range strings.SplitSeq(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		i := -1
		switch k {
		case "total_net_input_bytes":
			i = 0
		case "total_commands_processed":
			i = 1
		}
		if i < 0 {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return out, fmt.Errorf("INFO stats %s: %w", k, err)
		}
		out[i] = n
		found++
	}
	if found != 2 {
		return out, fmt.Errorf("INFO stats: no total_net_input_bytes or total_commands_processed")
	}
	return out, nil
}
