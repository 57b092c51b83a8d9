package reshard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard"
)

// delIfSame deletes a key only while it still holds the value that was
// dumped (ARGV[1], its DUMP payload), so that a key changed meanwhile is
// never deleted. It answers 1 (deleted), 0 (gone) or -1: the key is there
// with another payload, which may hold the same value (delIfEqual).
var delIfSame = redis.NewScript(1, `local d = redis.call('DUMP', KEYS[1])
if d == ARGV[1] then return redis.call('DEL', KEYS[1]) end
if d then return -1 end
return 0`)

// delIfEqualSrc is delIfSame for a key whose payload differs from the one
// dumped: it deletes the key (KEYS[1]) only while its value is the one
// dumped (ARGV[1]), compared element by element with a copy of it
// restored in a scratch key of its slot (KEYS[2]), which the script
// deletes before it returns: no client ever sees it. It answers as
// delIfSame, -1 for a value that differs or cannot be compared.
//
// A DUMP payload is the value's encoding, not the value: the same hash
// dumps otherwise once re-encoded (listpack to hashtable after a reload
// under lower thresholds, or a MIGRATE to a master that has them), and a
// hashtable's fields come in another order as its rehash goes on, which
// a mere read of it moves on. Such an old copy, unchanged, was left at
// the old node with the key restored at the new one. A write to the key
// after its DUMP changes its value, which this comparison sees: the
// copy then stays. Strings, lists, sets, sorted sets and hashes are
// compared (a sorted set's scores as the node formats them, the same for
// both); any other type (a stream, a module's) is not, and stays, as does
// a key whose scratch key cannot be made (the name taken, the payload
// refused, or TRYAGAIN from a cluster whose slot is being moved: the
// scratch key is not there yet). Only keys whose payload differs pay the
// cost: a RESTORE and a full read of both copies on the old node.
const delIfEqualSrc = `local d = redis.call('DUMP', KEYS[1])
if d == ARGV[1] then return redis.call('DEL', KEYS[1]) end
if not d then return 0 end
` + sameValueLua + `
if sameValue(KEYS[1], KEYS[2], ARGV[1]) then return redis.call('DEL', KEYS[1]) end
return -1`

// sameValueLua defines, for a script, sameValue(k, scratch, payload):
// whether key k holds the value of DUMP payload payload, compared element
// by element with a copy of it restored in scratch (a key of k's slot:
// scratchKey), which it deletes again. It is false for a value that
// differs or cannot be compared (see delIfEqualSrc): scratch taken, the
// payload refused, a type not compared.
const sameValueLua = `local function equal(a, b)
  local t = redis.call('TYPE', a).ok
  if t ~= redis.call('TYPE', b).ok then return false end
  if t == 'string' then return redis.call('GET', a) == redis.call('GET', b) end
  if t == 'list' then
    local x, y = redis.call('LRANGE', a, 0, -1), redis.call('LRANGE', b, 0, -1)
    if #x ~= #y then return false end
    for i = 1, #x do if x[i] ~= y[i] then return false end end
    return true
  end
  if t == 'hash' then
    if redis.call('HLEN', a) ~= redis.call('HLEN', b) then return false end
    local x = redis.call('HGETALL', b)
    for i = 1, #x, 2 do if redis.call('HGET', a, x[i]) ~= x[i + 1] then return false end end
    return true
  end
  if t == 'set' then
    if redis.call('SCARD', a) ~= redis.call('SCARD', b) then return false end
    local x = redis.call('SMEMBERS', b)
    for i = 1, #x do if redis.call('SISMEMBER', a, x[i]) == 0 then return false end end
    return true
  end
  if t == 'zset' then
    if redis.call('ZCARD', a) ~= redis.call('ZCARD', b) then return false end
    local x = redis.call('ZRANGE', b, 0, -1, 'WITHSCORES')
    for i = 1, #x, 2 do if redis.call('ZSCORE', a, x[i]) ~= x[i + 1] then return false end end
    return true
  end
  return false
end
local function sameValue(k, scratch, payload)
  if redis.call('EXISTS', scratch) == 1 then return false end
  local r = redis.pcall('RESTORE', scratch, 0, payload)
  if type(r) == 'table' and r.err then return false end
  local same = equal(k, scratch)
  redis.call('DEL', scratch)
  return same
end`

var delIfEqual = redis.NewScript(2, delIfEqualSrc)

// scratchKey is delIfEqual's scratch key for key k: in k's cluster slot,
// so that a cluster node runs the script.
func scratchKey(k string) string {
	return "shardis:reshard:compare:{" + slotTags()[cluster.Slot(k)] + "}"
}

// restoreBeforeSrc restores a key on the new node (RESTORE without
// REPLACE; ARGV[2] the TTL, ARGV[3] the payload) only while the new
// node's clock is before ARGV[1] (Unix ms), a moment before which the old
// node's writes are surely still paused; later it restores nothing and
// answers PAUSEOVER. A RESTORE slow on its way would otherwise land after
// a client moved the key (its MIGRATE found no copy yet) and deleted it:
// the deleted value back.
//
// A key the new node has already (BUSYKEY) with the very value dumped
// and the same expiry (none for both, or TTLs within ARGV[4] ms: see
// sameExpiry) answers SAME: a MIGRATE of the batch that failed midway
// (IOERR) carried it there and lost the answer, or an earlier batch
// restored it and did not delete the old copy. The key is then moved, not
// busy. One with the same expiry and another payload answers SAMETTL: the
// new node may hold the same value in another encoding (lower thresholds
// there re-encode what RESTORE loads), which the mover then compares by
// value (sameValueAt), once the old node's writes run again. The same
// value with another expiry is a client's write (DUMP carries no TTL):
// busy, as any other copy.
const restoreBeforeSrc = `local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(ARGV[1]) then
  return redis.error_reply('PAUSEOVER the old node may take writes again: nothing restored')
end
local r = redis.pcall('RESTORE', KEYS[1], ARGV[2], ARGV[3])
if type(r) == 'table' and r.err and string.find(r.err, 'BUSYKEY', 1, true) then
  local p = redis.call('PTTL', KEYS[1])
  local want = tonumber(ARGV[2])
  if (p == -1 and want == 0) or (p >= 0 and want > 0 and math.abs(p - want) <= tonumber(ARGV[4])) then
    if redis.call('DUMP', KEYS[1]) == ARGV[3] then return 'SAME' end
    return 'SAMETTL'
  end
end
return r`

var restoreBefore = redis.NewScript(1, restoreBeforeSrc)

// sameValueScript answers 1 when KEYS[1] holds the value of DUMP payload
// ARGV[1] (sameValueLua; KEYS[2] its scratch key), else 0.
var sameValueScript = redis.NewScript(2, sameValueLua+`
if sameValue(KEYS[1], KEYS[2], ARGV[1]) then return 1 end
return 0`)

// sameValueAt reports whether key k on the new node (conn) holds the
// value of DUMP payload payload, compared by value (sameValueLua), the
// same value in another encoding included; asking: after an ASKING (the
// node imports k's slot). A comparison that cannot be
// made (the scratch key refused: NOPERM, TRYAGAIN; the node slow past
// the wait of a MIGRATE of the value) reports false: the key counts as
// busy, as before it was compared.
func (m *mover) sameValueAt(ctx context.Context, conn redis.Conn, asking bool, k string, payload []byte) bool {
	n, err := runAt(ctx, conn, asking, m.migrateWait(int64(len(payload))), sameValueScript, k, scratchKey(k), payload)
	return err == nil && n == 1
}

// dumpMove moves keys through the mover: DUMP and PTTL on the old node,
// RESTORE (without REPLACE: a key the new owner has is kept, it is the
// newer one) on the new node, then a delete on the old node of each copy
// that has not changed since it was dumped.
//
// Writes on the old node are paused (CLIENT PAUSE WRITE), once the
// connection to the new node is taken, from before the DUMPs until every
// RESTORE has answered, as a MIGRATE holds the old node
// until its target answered. Without it a client could move a key after
// its DUMP (its MIGRATE finds no copy at the new owner yet), then delete
// it or let it expire there, and the RESTORE would bring the dumped value
// back: an acknowledged INCR and DEL undone. With it, a client's MIGRATE,
// DEL or blind overwrite of a key in the batch waits, and then meets the
// restored copy (BUSYKEY: the old one is deleted) or no copy at all. Reads
// at the old owner go on. It begins only once no other client's pause is
// on (pauseWrites). The pause ends with CLIENT UNPAUSE, or by
// itself Timeout+1s after it began if the mover dies; the batch fails
// rather than wait for a reply past that moment.
//
// Out of a cluster, keys may move to another master of it meanwhile (a
// slot moved by its operator): src answers MOVED to their DUMP, and they
// are moved from the master named, after the batch, with a batch of their
// own there (followMoved: bounded hops, a *shard.RetryError past them).
// A key restored whose slot moved before its old copy was deleted answers
// MOVED to the delete: the copy is deleted at the master named, still only
// while it holds the value dumped. A key is deleted from the old topology
// only once its value was restored at dst (or dst had a copy of its own,
// which RESTORE without REPLACE never overwrites).
func (m *mover) dumpMove(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string) (int, error) {
	return m.dumpMoveAt(ctx, conn, src, dst, keys, 0, false, false)
}

// redirected is keys that an old cluster's master refused with the
// MOVED or ASK err.
type redirected struct {
	keys []string
	err  error
}

// addRedirect records key k, refused by old node src with the MOVED or
// ASK err, in away by the master it names and the redirect's kind.
func addRedirect(away map[string]*redirected, src shard.Node, k string, err error) {
	at := redirectKey(src, err)
	g := away[at]
	if g == nil {
		g = &redirected{err: err}
		away[at] = g
	}
	g.keys = append(g.keys, k)
}

// dumpMoveAt is dumpMove after hop MOVED or ASK redirects of the old
// cluster; asking: keys that left for src, which imports their slot,
// each command on them after an ASKING. dstAsking: dst imports the keys'
// slot of the new cluster, whose owner answered ASK for them (a new key of
// a slot being moved belongs at the importing master): each RESTORE there
// after an ASKING (followNewMoved, to_cluster_moved.go).
//
// A slot being moved inside the old cluster (MIGRATING at src) makes src
// answer ASK to the DUMP of a key that has left for the importing master,
// or to the delete of one that left once restored: it is dumped, or
// deleted, there.
func (m *mover) dumpMoveAt(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, hop int, asking, dstAsking bool) (int, error) {
	if testHookDump != nil {
		testHookDump(src, keys)
	}
	away := map[string]*redirected{}
	moved, err := m.dumpBatch(ctx, conn, src, dst, keys, hop, asking, dstAsking, away)
	if err != nil {
		return moved, err
	}
	for _, addr := range sortedKeys(away) {
		g := away[addr]
		n, err := m.followMoved(ctx, src, dst, "DUMP", fmt.Sprintf("DUMP of %d keys", len(g.keys)), g.err, hop,
			func(c redis.Conn, at shard.Node, hop int, asking bool) (int, error) {
				return m.dumpMoveAt(ctx, c, at, dst, g.keys, hop, asking, dstAsking)
			})
		moved += n
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// dumped is a key's DUMP and PTTL (RESTORE's TTL: 0 for none).
type dumped struct {
	key     string
	payload []byte
	ttl     int64
}

// dumpBatch moves keys from src (conn) to dst for dumpMoveAt, after hop
// redirects (asking: each command on keys after an ASKING; dstAsking:
// each RESTORE at dst after one), and records in
// away the keys that src refused with MOVED or ASK, which it does not
// move.
func (m *mover) dumpBatch(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, hop int, asking, dstAsking bool, away map[string]*redirected) (int, error) {
	// The new node's connection first: a dial (and its handshake) to a
	// node that does not answer must not hold the old node's writes.
	dconn, err := m.pools.Get(ctx, dst.Addr)
	if err != nil {
		return 0, &shard.NodeError{Node: dst, Err: err}
	}
	defer dconn.Close()
	hold := m.opts.Timeout + time.Second
	// Another client's pause (an operator's, or one that a failed or
	// killed batch left to end by itself) is waited out first: the
	// batch's deadlines below must not run during that wait. A batch's
	// pause lasts hold from a moment before now; the server lifts it up
	// to a tick of its clock late, hence the margin.
	if err := awaitUnpaused(conn, hold+time.Second); err != nil {
		return 0, &shard.NodeError{Node: src, Err: err}
	}
	// The new node's clock before the pause: a RESTORE it runs before
	// that plus hold runs while the old node's writes are paused.
	newDeadline, err := m.restoreDeadline(dconn, hold)
	if err != nil {
		return 0, &shard.NodeError{Node: dst, Err: err}
	}
	deadline := time.Now().Add(hold) // the pause began after this moment, so it lasts at least until deadline
	if err := pauseWrites(conn, hold, time.Until(deadline)); err != nil {
		return 0, &shard.NodeError{Node: src, Err: err}
	}
	// CLIENT PAUSE calls so far, ours included: one more before the
	// UNPAUSE is someone else's pause, which the UNPAUSE would lift.
	pauses, counted := pauseCalls(ctx, conn)
	if testHookPaused != nil {
		testHookPaused()
	}
	paused := true
	restoring := false // RESTOREs sent and not all answered
	unpause := func() error {
		if !paused || restoring {
			// A RESTORE not answered may still run: the pause lasts
			// until it ends by itself, after newDeadline.
			return nil
		}
		paused = false
		if counted {
			// Not told (INFO failed, or an error reply of an early
			// return pending on conn): the UNPAUSE, as without a count.
			if n, ok := pauseCalls(ctx, conn); ok && n != pauses {
				// Another client paused the node's writes during the
				// batch (an operator, before a failover): Redis keeps
				// one pause, with the later end, and CLIENT UNPAUSE
				// would end it. Ours ends by itself at hold.
				return ErrPausedByOther
			}
		}
		// Even when ctx ended: the pause must not outlast the batch.
		_, err := redis.DoContext(conn, context.WithoutCancel(ctx), "CLIENT", "UNPAUSE")
		return err
	}
	defer unpause()
	receive := func(c redis.Conn) (any, error) {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%w: the batch took longer than the pause of %v (raise Timeout, --timeout of shardis reshard, or lower Batch)", ErrPauseOver, hold)
		}
		return redis.ReceiveWithTimeout(c, min(left, m.opts.Timeout))
	}
	for _, k := range keys {
		sendAsking(conn, asking)
		conn.Send("DUMP", k)
		sendAsking(conn, asking)
		conn.Send("PTTL", k)
	}
	if err := conn.Flush(); err != nil {
		return 0, &shard.NodeError{Node: src, Err: err}
	}
	var items []dumped
	for _, k := range keys {
		payload, err1 := redis.Bytes(receiveAsked(conn, asking, receive))
		ttl, err2 := redis.Int64(receiveAsked(conn, asking, receive))
		if m.oldMoved(err1) || m.oldMoved(err2) {
			// Its slot moved to another master, or it left for the
			// importing master of its slot: moved from there.
			addRedirect(away, src, k, cmp.Or(err1, err2))
			continue
		}
		if err1 == redis.ErrNil || ttl == -2 {
			continue // gone meanwhile
		}
		if err1 != nil {
			return 0, &shard.NodeError{Node: src, Err: fmt.Errorf("DUMP %q: %w", k, err1)}
		}
		if err2 != nil {
			return 0, &shard.NodeError{Node: src, Err: fmt.Errorf("PTTL %q: %w", k, err2)}
		}
		switch {
		case ttl < 0: // -1: no expiry, which RESTORE's 0 says
			ttl = 0
		case ttl == 0:
			// The key expires in this very millisecond; RESTORE would
			// read 0 as "no expiry" and make it persistent. MIGRATE
			// sends 1 in this case too.
			ttl = 1
		}
		items = append(items, dumped{key: k, payload: payload, ttl: ttl})
	}
	if len(items) == 0 {
		// Every key was gone: the pause must still end, or the old
		// node's writes wait until it runs out.
		if err := unpause(); err != nil && !errors.Is(err, ErrPausedByOther) {
			return 0, &shard.NodeError{Node: src, Err: fmt.Errorf("CLIENT UNPAUSE: %w", err)}
		}
		return 0, nil
	}
	restoring = true
	for _, it := range items {
		sendAsking(dconn, dstAsking)
		restoreBefore.SendHash(dconn, it.key, newDeadline, it.ttl, it.payload, m.expirySlack().Milliseconds())
	}
	// The largest value of the batch, which a failure of the new node's
	// connection names (restoreConnErr).
	largest := 0
	for i, it := range items {
		if len(it.payload) > len(items[largest].payload) {
			largest = i
		}
	}
	if err := dconn.Flush(); err != nil {
		return 0, &shard.NodeError{Node: dst, Err: restoreConnErr(len(items), items[largest].key, len(items[largest].payload), m.opts.Timeout, err)}
	}
	moved := 0
	busy := make([]bool, len(items)) // the new node had the key: counted once the old copy is deleted
	var recheck []int                // busy with the expiry dumped and another payload: compared by value
	var refused error                // the first RESTORE the new node refused
	for i, it := range items {
		reply, err := receiveAsked(dconn, dstAsking, receive)
		switch s, _ := redis.String(reply, err); s {
		case "SAME":
			moved++ // the new node holds the dumped value already
			continue
		case "SAMETTL":
			busy[i] = true // unless it holds the value dumped, re-encoded
			recheck = append(recheck, i)
			continue
		}
		if isReplyError(err, "BUSYKEY") {
			busy[i] = true
			continue
		}
		if isReplyError(err, "PAUSEOVER") {
			err = errtext.Errorf("%w: %w", ErrPauseOver, err)
		}
		var re redis.Error
		if err != nil && !errors.Is(err, ErrPauseOver) && (!errors.As(err, &re) || isReplyError(err, "Protocol error")) {
			// The connection failed, or the new node refused what it
			// read and closes it.
			return 0, &shard.NodeError{Node: dst, Err: restoreConnErr(len(items), items[largest].key, len(items[largest].payload), m.opts.Timeout, err)}
		}
		if err != nil && !errors.Is(err, ErrPauseOver) {
			// The new node refused this key (a MOVED of a cluster whose
			// slot moved, a NOPERM): the other RESTOREs are answered
			// still, so that the pause ends now, not at hold, before
			// the batch fails with the first refusal and deletes nothing.
			if refused == nil {
				if aclRefusal(err) {
					err = &permissionError{err: err}
				}
				refused = &shard.NodeError{Node: dst, Err: fmt.Errorf("RESTORE %q: %w", it.key, err)}
			}
			continue
		}
		if err != nil {
			return 0, &shard.NodeError{Node: dst, Err: fmt.Errorf("RESTORE %q: %w", it.key, err)}
		}
		moved++
	}
	restoring = false
	if refused != nil {
		if err := unpause(); err != nil && !errors.Is(err, ErrPausedByOther) {
			return 0, &shard.NodeError{Node: src, Err: fmt.Errorf("CLIENT UNPAUSE: %w", err)}
		}
		return 0, refused
	}
	if err := unpause(); errors.Is(err, ErrPausedByOther) {
		// The old copies cannot be deleted before the other pause ends:
		// both copies stay (the next move of each key keeps the new one).
		return 0, &shard.NodeError{Node: src, Err: err}
	} else if err != nil {
		return 0, &shard.NodeError{Node: src, Err: fmt.Errorf("CLIENT UNPAUSE: %w", err)}
	}
	// The keys are restored at dst: their old copies are deleted, as the
	// pause was lifted, even once ctx has ended (each command bounded by
	// its wait). A batch cancelled here left every key at both nodes,
	// counted moved by no one, when its deletes needed ctx (the script's
	// NOSCRIPT on the batch's first run at src, or a MOVED to follow).
	ctx = context.WithoutCancel(ctx)
	for _, i := range recheck {
		if m.sameValueAt(ctx, dconn, dstAsking, items[i].key, items[i].payload) {
			busy[i] = false
			moved++
		}
	}
	if testHookDelete != nil {
		ks := make([]string, len(items))
		for i, it := range items {
			ks[i] = it.key
		}
		testHookDelete(src, ks)
	}
	for _, it := range items {
		sendAsking(conn, asking)
		if err := delIfSame.SendHash(conn, it.key, it.payload); err != nil {
			return 0, &shard.NodeError{Node: src, Err: err}
		}
	}
	if err := conn.Flush(); err != nil {
		return 0, &shard.NodeError{Node: src, Err: err}
	}
	var firstErr error
	deleted := make([]bool, len(items))
	differs := make([]bool, len(items)) // there, with another payload (delIfEqual)
	// The old copies whose slot moved to another master of the old
	// cluster once restored, or that left for the importing master of
	// their slot (the delete answered MOVED or ASK), by that master and
	// the redirect's kind.
	gone := map[string][]int{}
	goneErr := map[string]error{}
	elsewhere := func(i int, err error) bool {
		if !m.oldMoved(err) {
			return false
		}
		at := redirectKey(src, err)
		gone[at] = append(gone[at], i)
		goneErr[at] = err
		return true
	}
	for i := range items {
		n, err := redis.Int(receiveAsked(conn, asking, func(c redis.Conn) (any, error) {
			return redis.ReceiveWithTimeout(c, m.opts.Timeout)
		}))
		if elsewhere(i, err) {
			continue
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		deleted[i] = err == nil && n > 0
		differs[i] = err == nil && n < 0
	}
	if firstErr == nil {
		for i, it := range items {
			if !differs[i] {
				continue
			}
			n, err := m.delIfEqualAt(ctx, conn, asking, it)
			if elsewhere(i, err) {
				continue
			}
			if err != nil {
				firstErr = err
				break
			}
			deleted[i] = n > 0
		}
	}
	if isReplyError(firstErr, "NOSCRIPT") {
		// The script was not loaded yet: load it and delete again.
		clear(gone)
		for i, it := range items {
			n, err := m.delIfSameAt(ctx, conn, asking, it)
			if elsewhere(i, err) {
				continue
			}
			if err != nil {
				m.countBusy(busy, deleted)
				return 0, &shard.NodeError{Node: src, Err: err}
			}
			deleted[i] = n > 0
		}
		firstErr = nil
	}
	if firstErr == nil {
		for _, addr := range sortedKeys(gone) {
			its := make([]dumped, len(gone[addr]))
			for j, i := range gone[addr] {
				its[j] = items[i]
			}
			del, err := m.delMoved(ctx, src, dst, its, goneErr[addr], hop)
			for j, i := range gone[addr] {
				deleted[i] = del[j]
			}
			if err != nil {
				firstErr = err
				break
			}
		}
	}
	m.countBusy(busy, deleted)
	if firstErr != nil {
		var ne *shard.NodeError
		if errors.As(firstErr, &ne) {
			return 0, firstErr
		}
		return 0, &shard.NodeError{Node: src, Err: firstErr}
	}
	return moved, nil
}

// delMoved deletes the old copies of its, restored at dst, which old node
// src refused to delete with the MOVED or ASK err (their slot moved to
// another master of the old cluster after hop redirects, or they left
// for the importing master of their slot), at the master named:
// each only while it holds the value dumped (delIfSame), following its
// MOVED in turn within maxMoveRedirects. It reports which it deleted.
func (m *mover) delMoved(ctx context.Context, src, dst shard.Node, its []dumped, err error, hop int) ([]bool, error) {
	deleted := make([]bool, len(its))
	_, err = m.followMoved(ctx, src, dst, "EVALSHA", fmt.Sprintf("deleting %d keys restored", len(its)), err, hop,
		func(c redis.Conn, at shard.Node, hop int, asking bool) (int, error) {
			for i, it := range its {
				n, err := m.delIfSameAt(ctx, c, asking, it)
				if m.oldMoved(err) {
					d, err := m.delMoved(ctx, at, dst, its[i:i+1], err, hop)
					deleted[i] = d[0]
					if err != nil {
						return 0, err
					}
					continue
				}
				if err != nil {
					return 0, &shard.NodeError{Node: at, Err: err}
				}
				deleted[i] = n > 0
			}
			return 0, nil
		})
	return deleted, err
}

// delIfSameAt deletes the old copy of it on conn while it holds the value
// dumped (delIfSame), after an ASKING when asking. The ASKING covers the
// next command only, so the script is loaded first rather than sent
// again after a NOSCRIPT. The script DUMPs the value, which takes time
// in proportion to its size: its answer is waited for as a MIGRATE of it
// is (migrateWait), not as ctx allows (a batch's deletes outlast it).
//
// A copy there with another payload is compared by value (delIfEqual).
func (m *mover) delIfSameAt(ctx context.Context, conn redis.Conn, asking bool, it dumped) (int, error) {
	n, err := runAt(ctx, conn, asking, m.migrateWait(int64(len(it.payload))), delIfSame, it.key, it.payload)
	if err != nil || n >= 0 {
		return n, err
	}
	return m.delIfEqualAt(ctx, conn, asking, it)
}

// delIfEqualAt deletes the old copy of it on conn, whose payload differs
// from the one dumped, while it holds the value dumped (delIfEqual),
// after an ASKING when asking. A TRYAGAIN (a cluster's slot being moved:
// the scratch key is not on the node) keeps the copy, as a value that
// differs does: the next run moves it, or Verify finds it. So does a
// NOPERM: the mover's user on the old node may not touch the scratch
// key (an ACL written before the mover compared by value), and the key
// is already restored at the new node; refusing the batch over the old
// copy would stop the run where a re-run or Verify finishes it. The script
// restores and reads the value whole, which takes time in proportion to
// its size: its answer is waited for as a MIGRATE of it is (migrateWait).
func (m *mover) delIfEqualAt(ctx context.Context, conn redis.Conn, asking bool, it dumped) (int, error) {
	n, err := runAt(ctx, conn, asking, m.migrateWait(int64(len(it.payload))), delIfEqual, it.key, scratchKey(it.key), it.payload)
	if isReplyError(err, "TRYAGAIN") || isReplyError(err, "NOPERM") {
		return -1, nil
	}
	return n, err
}

// runAt runs script s on conn with keysAndArgs, after an ASKING when
// asking, and returns its integer answer, waiting up to wait for it (0:
// as ctx and the connection allow). The ASKING covers the next command
// only, so the script is loaded first rather than sent again after a
// NOSCRIPT.
func runAt(ctx context.Context, conn redis.Conn, asking bool, wait time.Duration, s *redis.Script, keysAndArgs ...any) (int, error) {
	if !asking && wait == 0 {
		return redis.Int(s.DoContext(ctx, conn, keysAndArgs...))
	}
	if err := s.Load(conn); err != nil {
		return 0, err
	}
	sendAsking(conn, asking)
	if err := s.SendHash(conn, keysAndArgs...); err != nil {
		return 0, err
	}
	if err := conn.Flush(); err != nil {
		return 0, err
	}
	return redis.Int(receiveAsked(conn, asking, func(c redis.Conn) (any, error) {
		if wait > 0 {
			return redis.ReceiveWithTimeout(c, wait)
		}
		return redis.ReceiveContext(c, ctx)
	}))
}

// restoreConnErr describes a failure of the new node's connection, whose
// answers the mover waited up to wait for, while a batch of n RESTOREs
// was sent or answered, the largest value key of size bytes dumped. A
// new node closes the connection of a value over its proto-max-bulk-len
// or client-query-buffer-limit, which the bare "connection reset by
// peer" does not say: the error says so, and names that value, when the
// evidence supports it: the new node's protocol error, or a connection
// closed during a batch with a value that can be over such a limit
// (Redis accepts none under 1 MB). A timeout is no such evidence (the
// new node paused by CLIENT PAUSE, busy, or out of reach): the error
// says the new node did not answer in time, as a closed connection
// with small values says only what happened.
func restoreConnErr(n int, key string, size int, wait time.Duration, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("restoring %d keys: the new node did not answer, or take the batch, within %v (its writes paused by CLIENT PAUSE, busy, or slow to reach: try again, or raise Timeout, --timeout of shardis reshard): %w", n, wait, err)
	}
	if isReplyError(err, "Protocol error") || size+limitSlack >= smallestBulkLimit {
		return fmt.Errorf("restoring %d keys, the largest %q of %d bytes dumped (the new node closes the connection of a value over its proto-max-bulk-len or client-query-buffer-limit: raise them, or move that key otherwise): %w", n, key, size, err)
	}
	return fmt.Errorf("restoring %d keys, the largest %q of %d bytes dumped: %w", n, key, size, err)
}

// expirySlack is how far apart the TTLs of a key's two copies with one
// value may be for the new node's copy to be taken for one the mover (or
// a MIGRATE) left, which carries the old copy's TTL as it was when sent:
// restored up to a batch's Timeout plus a second later, its expiry is
// that much later at most. A copy whose expiry differs more (or that has
// none while the old one has one, or the reverse) is a client's write.
func (m *mover) expirySlack() time.Duration {
	return m.opts.Timeout + time.Second
}

// sameExpiry reports whether two PTTL answers (-1: no expiry) tell of one
// expiry, within slack.
func sameExpiry(a, b int64, slack time.Duration) bool {
	if a < 0 || b < 0 {
		return a == b
	}
	return max(a-b, b-a) <= slack.Milliseconds()
}

// smallestBulkLimit is the least proto-max-bulk-len and
// client-query-buffer-limit that Redis accepts (1 MB); limitSlack
// allows for the rest of a RESTORE's request around its value.
const (
	smallestBulkLimit = 1 << 20
	limitSlack        = 64 << 10
)

// countBusy counts the keys of a batch that the new node already had
// (busy) and whose old copy was deleted.
func (m *mover) countBusy(busy, deleted []bool) {
	for i := range busy {
		if busy[i] && deleted[i] {
			m.busy.Add(1)
		}
	}
}

// restoreDeadline loads restoreBefore on the new node (dconn) and returns
// its clock (Unix ms) plus hold, in one round trip.
func (m *mover) restoreDeadline(dconn redis.Conn, hold time.Duration) (int64, error) {
	dconn.Send("SCRIPT", "LOAD", restoreBeforeSrc)
	dconn.Send("TIME")
	if err := dconn.Flush(); err != nil {
		return 0, err
	}
	if _, err := redis.ReceiveWithTimeout(dconn, m.opts.Timeout); err != nil {
		return 0, fmt.Errorf("SCRIPT LOAD: %w", err)
	}
	t, err := redis.Int64s(redis.ReceiveWithTimeout(dconn, m.opts.Timeout))
	if err == nil && len(t) != 2 {
		err = fmt.Errorf("unexpected reply of %d elements", len(t))
	}
	if err != nil {
		return 0, fmt.Errorf("TIME: %w", err)
	}
	return t[0]*1000 + t[1]/1000 + hold.Milliseconds(), nil
}

// awaitUnpaused waits up to wait until no client's pause of writes is on
// at the old node (conn): a PUBLISH (to pauseProbe, no key, no data
// changed), which a pause of writes holds back, answers only then.
func awaitUnpaused(conn redis.Conn, wait time.Duration) error {
	var re redis.Error
	if _, err := redis.DoWithTimeout(conn, max(wait, time.Millisecond), "PUBLISH", pauseProbe, ""); err != nil && !errors.As(err, &re) {
		return pausedByOtherErr(wait, err) // any reply, an error included, says that no pause is on
	}
	return nil
}

func pausedByOtherErr(wait time.Duration, err error) error {
	return fmt.Errorf("the old node's writes stay paused by another client (CLIENT PAUSE) after %v: the DUMP/RESTORE path would lift that pause; try again once it ends: %w", wait, err)
}

// pauseWrites pauses the old node's writes (conn) for hold, once no other
// client's pause is on, waiting up to wait for that. Redis keeps one pause
// for every CLIENT PAUSE and CLIENT UNPAUSE ends it, so pausing on top of
// someone else's pause (an operator's, before a failover) would lift it at
// the batch's end, and let through the writes it held back. A PUBLISH
// (to pauseProbe, no key, no data changed), which a pause of writes holds
// back, answers only once none is on; the CLIENT PAUSE behind it in the
// same write runs right after it, before any other client's command.
func pauseWrites(conn redis.Conn, hold, wait time.Duration) error {
	conn.Send("PUBLISH", pauseProbe, "")
	conn.Send("CLIENT", "PAUSE", hold.Milliseconds(), "WRITE")
	if err := conn.Flush(); err != nil {
		return err
	}
	// Any reply, an error included, says that no pause is on.
	var re redis.Error
	if _, err := redis.ReceiveWithTimeout(conn, max(wait, time.Millisecond)); err != nil && !errors.As(err, &re) {
		return pausedByOtherErr(wait, err)
	}
	if _, err := redis.ReceiveWithTimeout(conn, max(wait, time.Millisecond)); err != nil {
		return fmt.Errorf("CLIENT PAUSE WRITE (the DUMP/RESTORE path needs Redis 6.2 or later and the CLIENT command): %w", err)
	}
	return nil
}

// pauseCalls returns how many CLIENT PAUSE calls the node (conn) has run
// (INFO commandstats, "cmdstat_client|pause", Redis 7.0 and later); ok is
// false when it cannot tell (INFO refused, or an older server that counts
// every CLIENT subcommand together).
func pauseCalls(ctx context.Context, conn redis.Conn) (n int64, ok bool) {
	info, err := redis.String(redis.DoContext(conn, context.WithoutCancel(ctx), "INFO", "commandstats"))
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(info, "\n") {
		rest, found := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_client|pause:calls=")
		if !found {
			continue
		}
		v, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// testHookPaused, when set (by tests), runs once a batch's pause is on.
var testHookPaused func()

// testHookDump, when set (by tests), runs as dumpMove begins a batch of
// keys from old node n, before it pauses n's writes.
var testHookDump func(n shard.Node, keys []string)

// testHookDelete, when set (by tests), runs once a batch's keys are
// restored and n's writes unpaused, before their old copies (keys) are
// deleted from old node n.
var testHookDelete func(n shard.Node, keys []string)

// pauseProbe is the channel of pauseWrites' PUBLISH.
const pauseProbe = "shardis:reshard:pause-probe"
