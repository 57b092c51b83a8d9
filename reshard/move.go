package reshard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// Move scans every node of the old topology and moves each key whose
// owner changes to its new owner, in batches of MIGRATE ... KEYS (or DUMP,
// PTTL and RESTORE), never overwriting a key the new owner already has;
// then it verifies that no key is left on a node that does not own it,
// and moves what that verification finds left on old nodes that it moves
// (a slot of an old cluster moved to a master already scanned), at most 3
// more passes (Report.Rescans).
//
// Move is resumable: it keeps no state of its own. MIGRATE moves each key
// atomically on the old node (the key is at the old owner or at the new
// one, never lost, never at both once the command has returned, but for
// the keys whose answers an I/O error between the servers lost, which the
// DUMP/RESTORE that follows settles), so a Move killed at any point and
// run again simply scans again and moves what is left; keys already moved
// are not on the old nodes any more.
//
// Before moving, Move checks that no other Move of the same migration is
// running (a *ClientsError matching ErrMoverAlreadyRunning names its
// connections), that no process routes by one topology alone
// (CheckClients), and arms the fence (Arm). Keys on an old node that neither topology places
// there (strays, for example left by auto-eject) are left alone and
// counted; Verify reports them.
func Move(ctx context.Context, opts Options) (*Report, error) {
	for _, r := range []float64{opts.KeysPerSecond, opts.BytesPerSecond} {
		if !(r >= 0) || math.IsInf(r, 0) { // NaN, negative or infinite: the limiter would not limit
			return nil, fmt.Errorf("%w: a pace of %v per second (want a positive number, or 0 for no limit)", shard.ErrBadConfig, r)
		}
	}
	opts = opts.withDefaults()
	if opts.Addrs == nil && opts.To.Migration != nil {
		// To is the processes' config: its MIGRATEs go where theirs go.
		opts.Addrs = opts.To.Migration.Addrs
	}
	start := time.Now()
	c, err := routingClient(ctx, opts.From, opts.To, opts.Addrs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	info, _ := c.Migration()
	// A dry run moves nothing: its connections do not name the
	// migration, so that no mover takes it for one of its own or of the
	// opposite migration (opposite.go).
	po := moverPoolFor(opts.To.Pool, info, c.InstanceID())
	if opts.DryRun {
		po = moverPool(opts.To.Pool)
	}
	pools, err := pool.NewSet(po)
	if err != nil {
		return nil, errtext.Errorf("%w: %w", shard.ErrBadConfig, err)
	}
	defer pools.Close()
	if err := followNodes(c, pools, info.To.Nodes()); err != nil { // servers.go
		return nil, err
	}
	if !opts.DryRun {
		// Two movers of one migration (a second shardis reshard, a
		// retried cron job) would each take the other's beacons for a
		// process still on the migration and keep the fence, and count
		// the same keys twice.
		if err := noOtherMover(ctx, pools, info, c.InstanceID()); err != nil { // opposite.go
			return nil, err
		}
	}
	if opts.DryRun {
		if err := checkDistinctServers(ctx, pools, info); err != nil { // servers.go
			return nil, err
		}
	} else {
		// The clients check, then the fence (arm.go): no key moves before
		// every process routes by the new topology.
		// The probe MIGRATEs as the processes will, also when the
		// mover moves with DUMP/RESTORE (Options.Dump): they MIGRATE.
		armOpts := ArmOptions{AllowUnnamed: opts.AllowUnnamed, SkipClientCheck: opts.SkipClientCheck, SkipProbe: opts.SkipProbe}
		if err := arm(ctx, pools, info, armOpts, clientsMigrateTo(opts.Addrs, opts.To, c.NodeAddr)); err != nil {
			return nil, err
		}
	}
	m := &mover{opts: opts, pools: pools, from: info.From, to: info.To, start: start,
		limit: newLimiter(opts.KeysPerSecond, opts.BytesPerSecond), flows: map[[2]string]*Flow{},
		fenceKey: shard.FenceKey(info.FromID, info.ToID), addrOf: c.NodeAddr, refreshTo: c.Refresh}
	olds := info.From.Nodes()
	for _, n := range olds {
		size, err := m.dbsize(ctx, n)
		if err != nil {
			return nil, err
		}
		m.total += size
	}
	m.scanStart = time.Now() // the rates and the ETA count from here, not from the fence's wait
	stopProgress := m.reportProgress()
	err = m.drainAll(ctx, olds)
	stopProgress()
	rep := m.report()
	rep.Elapsed = time.Since(start)
	if err != nil {
		return rep, err
	}
	if opts.DryRun || opts.SkipVerify {
		return rep, nil
	}
	v, rescans, rescanMoved, err := m.verifyAndRescan(ctx, info, olds) // rescan.go
	if rescans > 0 {
		rep = m.report() // counting the passes after the verification too
		rep.Rescans, rep.RescanMoved = rescans, rescanMoved
	}
	rep.Elapsed = time.Since(start)
	if err != nil {
		return rep, err
	}
	rep.Verify = v
	if v.Misplaced > 0 {
		return rep, fmt.Errorf("after the move: %w", misplacedErr(v))
	}
	if opts.Finish {
		if err := finishAfterMove(ctx, pools, info, c.InstanceID(), rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// mover is one run of Move.
type mover struct {
	opts     Options
	pools    *pool.Set
	from, to shard.Router
	limit    *limiter
	start    time.Time
	// scanStart is when the scan began, once the fence was armed (a wait
	// of up to ArmOptions.Timeout for processes to acknowledge it).
	scanStart time.Time
	// samples are the scan's counts at the last progress reports, for
	// its recent rates (rates); the progress reporter's alone.
	samples  []rateSample
	fenceKey string // the marker of this migration (arm.go)
	total    int64
	// addrOf returns the address a new node is reached at now (a
	// Sentinel shard's master: shard.Client.NodeAddr); nil: its own.
	addrOf func(shard.Node) (string, error)
	// refreshTo reads the new topology's map again (a cluster's:
	// shard.Client.Refresh), after a MOVED of it (followNewMoved).
	refreshTo func(context.Context) error

	scanned, moved, busy, bytes, strays atomic.Int64
	// rescan says the drains are passes over old nodes where the closing
	// verification found keys left (rescan.go): the keys that stay, and
	// strays, were counted by the first pass.
	rescan bool

	mu    sync.Mutex
	flows map[[2]string]*Flow
	// dryClaimed are the keys a dry run out of a cluster found away from
	// the master its map places them on, or redirected when measured
	// (dryCountedElsewhere); under mu.
	dryClaimed map[string]struct{}
}

func (m *mover) dbsize(ctx context.Context, n shard.Node) (int64, error) {
	conn, err := m.pools.Get(ctx, n.Addr)
	if err != nil {
		return 0, &shard.NodeError{Node: n, Err: err}
	}
	defer conn.Close()
	size, err := redis.Int64(redis.DoContext(conn, ctx, "DBSIZE"))
	if err != nil {
		return 0, &shard.NodeError{Node: n, Err: err}
	}
	// The fence's marker is not a key to move (arm.go).
	marker, err := redis.Int64(redis.DoContext(conn, ctx, "EXISTS", m.fenceKey))
	if markerElsewhere(err) { // a cluster node that does not serve the marker's slot (fence_cluster.go)
		marker, err = 0, nil
	}
	if err != nil {
		return 0, &shard.NodeError{Node: n, Err: err}
	}
	return size - marker, nil
}

// drain scans old node n and moves the keys that leave it.
func (m *mover) drain(ctx context.Context, n shard.Node) error {
	conn, err := m.pools.Get(ctx, n.Addr)
	if err != nil {
		return &shard.NodeError{Node: n, Err: err}
	}
	defer func() { conn.Close() }()
	if testHookScan != nil {
		testHookScan(n)
	}
	batch := m.maxBatch() // adapted so that one MIGRATE blocks the old node about MaxBlock
	vals, err := redis.Values(redis.DoContext(conn, ctx, "SCAN", "0", "COUNT", m.opts.ScanCount))
	cursor, keys, err := scanPage(vals, err)
	if err != nil {
		return &shard.NodeError{Node: n, Err: err}
	}
	// The keys of the page before: SCAN returns a key again when the
	// node's table shrinks between two of its calls (the keys of the
	// buckets that fold into the one it goes on from, visited just
	// before), which an old node whose keys mostly leave does mid-scan.
	// Such a key is counted, and moved, once.
	var prev map[string]struct{}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("shardis: %w", err)
		}
		keys, prev = unseen(keys, prev)
		stay := int64(len(keys)) // counted as scanned now; moving keys once moved
		byOwner := map[string][]string{}
		owners := map[string]shard.Node{}
		for _, k := range keys {
			if shard.IsFenceKey(k) {
				stay-- // the fence's marker stays on every old node (arm.go)
				continue
			}
			owner, err := m.to.Route(k)
			if err != nil {
				return errtext.Errorf("shardis: routing %q: %w", k, err)
			}
			if owner.Addr == n.Addr {
				continue
			}
			if old, err := m.from.Route(k); (err != nil || old.Addr != n.Addr) && !m.fromCluster() {
				if !m.rescan {
					m.strays.Add(1)
				}
				continue
			}
			// Out of a cluster, a master holds only keys of the slots it
			// serves or imports: one the mover's map places elsewhere is
			// in a slot that moved to n since the map was read, and moves
			// from n (a MOVED n answers is followed: followMoved).
			stay--
			g := m.batchOf(owner, k) // from_cluster.go
			byOwner[g] = append(byOwner[g], k)
			owners[g] = owner
		}
		if !m.rescan {
			m.scanned.Add(stay)
		}
		if testHookPage != nil {
			testHookPage(n)
		}
		// The page's moving keys are measured at once, not per batch (out
		// of a cluster a batch holds the keys of one slot, often a single
		// key), and the next page is read in the same round trip
		// (measureAndScan): sizing the keys costs no round trip of its
		// own.
		var moving []string
		for _, ks := range byOwner {
			moving = append(moving, ks...)
		}
		if err := m.freshConn(ctx, &conn, n); err != nil {
			return err
		}
		next := cursor
		if cursor == "0" {
			next = "" // the scan is over
		}
		sizes, redirected, next, nextKeys, err := m.measureAndScan(ctx, conn, n, moving, next)
		if err != nil {
			return err
		}
		sizeOf := make(map[string]int64, len(moving))
		for i, k := range moving {
			sizeOf[k] = sizes[i]
		}
		counted := m.dryCountedElsewhere(n, moving, redirected) // dryrun.go
		for _, addr := range sortedKeys(byOwner) {
			ks := byOwner[addr]
			if len(counted) > 0 {
				ks = slices.DeleteFunc(slices.Clone(ks), func(k string) bool { return counted[k] })
			}
			for len(ks) > 0 {
				chunk := ks[:min(len(ks), batch)]
				ks = ks[len(chunk):]
				if err := m.freshConn(ctx, &conn, n); err != nil {
					return err
				}
				sizes := make([]int64, len(chunk))
				for i, k := range chunk {
					sizes[i] = sizeOf[k]
				}
				took, err := m.moveChunk(ctx, conn, n, owners[addr], chunk, sizes)
				if err != nil {
					return err
				}
				batch = m.adapt(batch, len(chunk), took)
				m.scanned.Add(int64(len(chunk)))
			}
		}
		if cursor == "0" {
			return nil
		}
		cursor, keys = next, nextKeys
	}
}

// testHookPage, when set (by tests), runs in drain once a page of old
// node n is sorted, before its keys move.
var testHookPage func(n shard.Node)

// testHookScan, when set (by tests), runs in drain before the first SCAN
// of old node n.
var testHookScan func(n shard.Node)

// testHookDrained, when set (by tests), runs once the drain of
// old node n has ended (drainAll: in Move and in each rescan).
var testHookDrained func(n shard.Node)

// testHookEach, when set (by tests), runs in migrateEach before the
// MIGRATE of key k from old node n.
var testHookEach func(n shard.Node, k string)

// unseen returns the keys of a SCAN page that the page before (seen)
// did not hold, and the set of the page's keys, for the next page: all of
// them, those the page before held included, so that a key returned by
// three pages in a row (the table shrinking twice) is counted once too.
//
// A key comes back only from the buckets that fold into the one SCAN goes
// on from, visited since its cursor entered them. The server's cron
// shrinks a table soon after it falls under 10% full, by a factor of about
// 10, while a page of COUNT c spans some c buckets at the least and up to
// 10c on a sparse table: the page before holds them. Only a fold wider
// than a page, a node emptied of nearly every key at once (by other
// clients between two pages, or while a child process, BGSAVE or an AOF
// rewrite, holds its shrink back), can return a key from further back,
// which is counted again (Scanned, Strays; Verify's figures; the keys
// moved since are gone and come back no more). Remembering every key that
// stays would take memory in proportion to the node's keys.
func unseen(keys []string, seen map[string]struct{}) ([]string, map[string]struct{}) {
	page := make(map[string]struct{}, len(keys))
	out := keys[:0]
	for _, k := range keys {
		_, again := seen[k]
		if _, ok := page[k]; ok {
			again = true
		}
		page[k] = struct{}{}
		if !again {
			out = append(out, k)
		}
	}
	return out, page
}

// freshConn replaces *conn, a connection to old node n, with a fresh one
// when it broke.
func (m *mover) freshConn(ctx context.Context, conn *redis.Conn, n shard.Node) error {
	if (*conn).Err() == nil {
		return nil
	}
	(*conn).Close()
	// Not into *conn on failure: Get returns nil then, and the
	// deferred Close would panic.
	fresh, err := m.pools.Get(ctx, n.Addr)
	if err != nil {
		return &shard.NodeError{Node: n, Err: err}
	}
	*conn = fresh
	return nil
}

// scanPage reads a SCAN reply (vals, err): the next cursor and the keys.
func scanPage(vals []any, err error) (string, []string, error) {
	if err != nil || len(vals) != 2 {
		return "", nil, fmt.Errorf("SCAN: %w", scanErr(err, vals))
	}
	cursor, _ := redis.String(vals[0], nil)
	keys, err := redis.Strings(vals[1], nil)
	if err != nil {
		return "", nil, fmt.Errorf("SCAN: %w", err)
	}
	return cursor, keys, nil
}

// adapt returns the next batch size after a MIGRATE of n keys took d: the
// old node serves nothing else meanwhile, so a batch that blocked it past
// MaxBlock shrinks in proportion, and one well under it grows again, up to
// Batch. Small values travel in large batches, large ones in small.
func (m *mover) adapt(batch, n int, d time.Duration) int {
	limit := m.opts.MaxBlock
	switch {
	case m.opts.DryRun || n < batch && d <= limit:
		return batch // a short last chunk says little
	case d > limit:
		return max(1, int(float64(n)*float64(limit)/float64(d)))
	case d < limit/4:
		return min(m.maxBatch(), 2*batch)
	}
	return batch
}

// maxBatch is the most keys one MIGRATE carries: Batch, and under a pace
// of KeysPerSecond no more than a quarter of a second's worth (at least
// one). The pace books a batch whole and moves it at once when it falls
// due, so a batch of seconds' worth (512 keys at 150 keys/s) made the
// pace hold only on average: a 5 s window held two such batches, a third
// over the pace. A quarter second's worth keeps any 5 s window within 5%
// of it, and leaves the batches whole from 2,048 keys/s up.
func (m *mover) maxBatch() int {
	b := m.opts.Batch
	if r := m.opts.KeysPerSecond; r > 0 && !m.opts.DryRun {
		b = min(b, max(1, int(r/4)))
	}
	return b
}

func scanErr(err error, vals []any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("unexpected reply of %d elements", len(vals))
}

// moveChunk moves keys from old node src (conn) to dst, once the pace
// allows, and returns how long the moves themselves took: the time the
// old node was held, which adapt sizes the batches by. The pause that the
// pace imposes is not part of it; counting it would shrink the batches to
// a few keys at a low rate and multiply the servers' cost per key.
//
// Under a pace in bytes the chunk goes in runs of at most a quarter
// second's worth of bytes (at least one key each), as maxBatch caps a
// batch under a pace in keys: a run is booked whole and moved at once.
//
// sizes are the keys' sizes (measure); nil: moveChunk measures them.
func (m *mover) moveChunk(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, sizes []int64) (time.Duration, error) {
	if sizes == nil {
		var err error
		if sizes, err = m.measure(ctx, conn, src, keys); err != nil {
			return 0, err
		}
	}
	if m.opts.DryRun {
		// A key measured 0 was gone (MEMORY USAGE answers nil), or could
		// not be measured where it went: a move would skip it.
		m.count(src, dst, int64(measured(sizes)), sum(sizes))
		return 0, nil
	}
	var took time.Duration
	for len(keys) > 0 {
		n := len(keys)
		if m.opts.BytesPerSecond > 0 {
			n = m.byteRun(sizes)
		}
		d, err := m.moveRun(ctx, conn, src, dst, keys[:n], sizes[:n])
		if err != nil {
			return 0, err
		}
		took += d
		keys = keys[n:]
		sizes = sizes[n:]
	}
	return took, nil
}

// measure returns the sizes of keys on old node src (conn), MEMORY
// USAGE: a dry run's figures, what a pace in bytes books, and what bounds
// the wait for a MIGRATE (migrateWait). An old node that refuses MEMORY
// USAGE (a user not allowed it) is moved from without sizes (zeros), as
// before they bounded the wait, its bytes not counted, unless a dry run
// or a pace in bytes needs them.
func (m *mover) measure(ctx context.Context, conn redis.Conn, src shard.Node, keys []string) ([]int64, error) {
	sizes, _, _, _, err := m.measureAndScan(ctx, conn, src, keys, "")
	return sizes, err
}

// measureAndScan is measure, and, unless cursor is "", SCAN from cursor
// in the same round trip: it returns the keys' sizes, which of them src
// redirected (MOVED, ASK: measured where they went), and the next cursor
// and the keys of that page.
func (m *mover) measureAndScan(ctx context.Context, conn redis.Conn, src shard.Node, keys []string, cursor string) (sizes []int64, redirected []bool, next string, page []string, err error) {
	if len(keys) == 0 && cursor == "" {
		return nil, nil, "", nil, nil
	}
	for _, k := range keys {
		if err := conn.Send("MEMORY", "USAGE", k); err != nil {
			return nil, nil, "", nil, &shard.NodeError{Node: src, Err: err}
		}
	}
	want := len(keys)
	if cursor != "" {
		if err := conn.Send("SCAN", cursor, "COUNT", m.opts.ScanCount); err != nil {
			return nil, nil, "", nil, &shard.NodeError{Node: src, Err: err}
		}
		want++
	}
	// One read for all the replies, not a receive per key: less of the
	// mover's CPU per key.
	replies, err := redis.Values(redis.DoContext(conn, ctx, ""))
	if err == nil && len(replies) != want {
		err = fmt.Errorf("%d replies to %d commands", len(replies), want)
	}
	if err != nil {
		return nil, nil, "", nil, &shard.NodeError{Node: src, Err: err}
	}
	if cursor != "" {
		if next, page, err = scanPage(redis.Values(replies[len(keys)], nil)); err != nil {
			return nil, nil, "", nil, &shard.NodeError{Node: src, Err: err}
		}
	}
	sizes, err = memoryUsage(replies[:len(keys)])
	var re redis.Error
	switch {
	case err == nil:
		redirected = m.measureRedirected(ctx, src, keys, replies[:len(keys)], sizes)
	case !m.opts.DryRun && m.opts.BytesPerSecond == 0 && errors.As(err, &re):
		sizes = make([]int64, len(keys)) // refused: moved without sizes
	default:
		return nil, nil, "", nil, &shard.NodeError{Node: src, Err: err}
	}
	return sizes, redirected, next, page, nil
}

// measureRedirected measures, where they went, the keys that old node
// src redirected (MOVED, ASK: replies, of MEMORY USAGE of keys): the
// mover moves them from there (followMoved), and their bytes count in
// the report and against a pace in bytes as any other key's. It follows
// the redirects as the moves do, up to maxMoveRedirects of them (a key of
// a slot an importing master holds: MOVED to the slot's master, then ASK
// back); a key that cannot be measured stays at 0. It returns which keys
// src redirected (nil: none).
func (m *mover) measureRedirected(ctx context.Context, src shard.Node, keys []string, replies []any, sizes []int64) []bool {
	var redirected []bool
	var idx []int
	var why []error
	for i, r := range replies {
		if err, ok := r.(redis.Error); ok && m.oldMoved(err) {
			if redirected == nil {
				redirected = make([]bool, len(keys))
			}
			redirected[i] = true
			idx, why = append(idx, i), append(why, err)
		}
	}
	m.measureAt(ctx, src, keys, idx, why, sizes, 0)
	return redirected
}

// measureAt measures keys[i], for each i of idx, which old node at
// redirected with why (one error by index of idx) after hop redirects,
// where the redirects name, into sizes[i].
func (m *mover) measureAt(ctx context.Context, at shard.Node, keys []string, idx []int, why []error, sizes []int64, hop int) {
	groups := map[string][]int{} // the keys' indexes, by redirectKey
	first := map[string]error{}
	for j, i := range idx {
		g := redirectKey(at, why[j])
		groups[g] = append(groups[g], i)
		if first[g] == nil {
			first[g] = why[j]
		}
	}
	for _, g := range sortedKeys(groups) {
		n, asking, err := m.movedTo(at, at, "MEMORY", "measuring", first[g], hop)
		if err != nil {
			continue
		}
		conn, err := m.pools.Get(ctx, n.Addr)
		if err != nil {
			continue
		}
		for _, i := range groups[g] {
			sendAsking(conn, asking)
			conn.Send("MEMORY", "USAGE", keys[i])
		}
		var again []int
		var againWhy []error
		if conn.Flush() == nil {
			for _, i := range groups[g] {
				v, err := receiveAsked(conn, asking, func(c redis.Conn) (any, error) { return redis.ReceiveContext(c, ctx) })
				size, err := redis.Int64(v, err)
				switch {
				case err == nil:
					sizes[i] = size
				case m.oldMoved(err):
					again, againWhy = append(again, i), append(againWhy, err)
				}
			}
		}
		conn.Close()
		if len(again) > 0 {
			m.measureAt(ctx, n, keys, again, againWhy, sizes, hop+1)
		}
	}
}

// byteRun returns how many of the keys sized sizes one run carries under
// a pace in bytes: as many as a quarter second's worth holds, at least
// one.
func (m *mover) byteRun(sizes []int64) int {
	budget := m.opts.BytesPerSecond / 4
	var total float64
	for i, s := range sizes {
		total += float64(s)
		if total > budget {
			return max(1, i)
		}
	}
	return len(sizes)
}

// moveRun moves keys, of sizes bytes each, once the pace allows, and
// returns how long the move took.
func (m *mover) moveRun(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, sizes []int64) (time.Duration, error) {
	size := sum(sizes)
	if err := m.limit.wait(ctx, len(keys), size); err != nil {
		return 0, err
	}
	start := time.Now()
	if _, err := m.moveRunTo(ctx, conn, src, dst, keys, sizes, 0, false); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// moveRunTo moves keys (of sizes bytes each) from src to dst, counts
// them, and returns how many it moved, after hop MOVED or ASK replies of
// the new cluster (followNewMoved: to_cluster_moved.go). asking: dst is
// the importing master of the keys' slot, named by an ASK of its owner,
// and takes them only after ASKING, which MIGRATE cannot send: they move
// with DUMP/RESTORE.
func (m *mover) moveRunTo(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, sizes []int64, hop int, asking bool) (int, error) {
	var moved int
	var err error
	if m.opts.Dump || asking {
		moved, err = m.dumpMoveAt(ctx, conn, src, dst, keys, 0, false, asking)
	} else {
		moved, err = m.migrate(ctx, conn, src, dst, keys, sizes)
	}
	// A batch that failed may have moved keys before: they are at the
	// new node and gone from the old one, and count all the same.
	if err == nil || moved > 0 {
		m.count(src, dst, int64(moved), movedBytes(sizes, moved))
	}
	if r, ok := m.newMoved(dst, err); ok {
		n, err := m.followNewMoved(ctx, src, dst, keys, sizes, r, err, hop, func(to shard.Node, keys []string, sizes []int64, hop int, asking bool) (int, error) {
			return m.moveRunTo(ctx, conn, src, to, keys, sizes, hop, asking)
		})
		return moved + n, err
	}
	return moved, err
}

// movedBytes is the bytes of a run of keys sized sizes (measure) of
// which moved were moved. A key measured 0 was not there to measure: gone
// (MEMORY USAGE answers nil for a key deleted, expired or moved by a
// client since the scan, which no MEMORY USAGE of a key there does), left
// for another master of an old cluster, or not measured at all (all
// zeros). Such keys are the ones the move skips, or counts no bytes for
// when it moves them from elsewhere; the bytes are shared out among the
// keys measured only, so that a run whose keys half left before they were
// measured counts the bytes of the other half whole, not their half. Keys
// that left after they were measured are still counted by their share.
func movedBytes(sizes []int64, moved int) int64 {
	n := measured(sizes)
	if moved >= n {
		return sum(sizes)
	}
	return sum(sizes) * int64(moved) / int64(n)
}

// measured counts the keys of sizes measured more than 0 bytes: there
// when measured.
func measured(sizes []int64) int {
	n := 0
	for _, s := range sizes {
		if s > 0 {
			n++
		}
	}
	return n
}

func sum(sizes []int64) int64 {
	var t int64
	for _, s := range sizes {
		t += s
	}
	return t
}

// migrate moves keys (of sizes bytes each, MEMORY USAGE; nil: not
// known) with MIGRATE ... KEYS and returns how many it moved, also when
// it fails (the keys moved before the error); a key the new owner has is
// settled one by one (the new owner's copy wins, and the key is counted
// as busy, not moved, unless that copy is the very value of the old one:
// settleBusy); an I/O error between the servers falls back to
// DUMP/RESTORE through the mover.
//
// MIGRATE ... KEYS skips keys that are gone (deleted, expired or moved by
// a client since the scan) and answers NOKEY when none was left; when only
// some are gone it answers OK all the same. When it fails midway (an
// error of the new node for one key, BUSYKEY; or IOERR, the connection
// between the servers failing after some keys went) it has still moved,
// and deleted from the old node, every key the new node acknowledged. So
// the batch's MIGRATE runs in a transaction between two EXISTS of its keys
// (migrateCounted): the keys found before and gone after are those it
// moved, and a key a client moved first ("move before touch") is counted
// by the client alone.
func (m *mover) migrate(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, sizes []int64) (int, error) {
	return m.migrateAt(ctx, conn, src, dst, keys, sizes, 0, false)
}

// migrateAt is migrate after hop MOVED or ASK redirects of the old
// cluster (followMoved); asking: keys that left for src, which imports
// their slot, each command on them after an ASKING.
//
// A slot being moved inside the old cluster (MIGRATING at src) makes src
// refuse the batch's transaction, nothing run: ASK when every key of the
// batch has left for the importing master (then moved from there), and
// TRYAGAIN when some have (the importing master answers TRYAGAIN too when
// some are not there): the keys are then moved one by one, each from the
// master it is at.
func (m *mover) migrateAt(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, sizes []int64, hop int, asking bool) (int, error) {
	args, err := m.migrateArgs(dst, keys)
	if err != nil {
		return 0, &shard.NodeError{Node: dst, Err: err}
	}
	wait := m.migrateWait(sum(sizes))
	var moved int
	err = m.watchedMigrate(ctx, conn, src, dst, len(keys), wait, func(c redis.Conn) error {
		var err error
		moved, err = migrateCounted(c, wait, args, keys, asking)
		return err
	})
	what := fmt.Sprintf("MIGRATE of %d keys", len(keys))
	switch {
	case errors.Is(err, ErrOldNodeStalled):
		return moved, err
	case err == nil:
		return moved, nil
	case isReplyError(err, "BUSYKEY"):
		// The batch moved the keys the new owner took; each key is now
		// moved again on its own: NOKEY for those.
		n, err := m.migrateEachAt(ctx, conn, src, dst, keys, sizes, hop, asking)
		return moved + n, err
	case isReplyError(err, "IOERR"):
		// The keys the new node acknowledged are moved; those whose
		// answer was lost may be at both nodes, which DUMP/RESTORE
		// settles (restoreBefore: the new node holds the dumped value).
		n, err := m.dumpMoveAt(ctx, conn, src, dst, keys, hop, asking, false)
		return moved + n, err
	case m.oldMoved(err):
		return m.followMoved(ctx, src, dst, "MIGRATE", what, err, hop, func(c redis.Conn, at shard.Node, hop int, asking bool) (int, error) {
			return m.migrateAt(ctx, c, at, dst, keys, sizes, hop, asking)
		})
	case m.oldTryAgain(err) && len(keys) > 1:
		// Nothing ran. A transaction on one key is not refused so: it
		// runs, or answers ASK for a key that left.
		for i, k := range keys {
			n, err := m.migrateAt(ctx, conn, src, dst, []string{k}, sizes[min(i, len(sizes)):min(i+1, len(sizes))], hop, asking)
			moved += n
			if err != nil {
				return moved, err
			}
		}
		return moved, nil
	case m.oldTryAgain(err):
		if err := m.tryAgain(ctx, src, dst, "MIGRATE", what, err, hop); err != nil {
			return moved, err
		}
		return m.migrateAt(ctx, conn, src, dst, keys, sizes, hop+1, asking)
	default:
		return moved, m.migrateErr(src, dst, what, err)
	}
}

// migrateEach moves keys (of sizes bytes each; nil: not known) one by
// one with MIGRATE, after a batch of them met BUSYKEY, and returns how
// many it moved, also when it fails. A key the new owner has is settled
// by settleBusy.
// A MIGRATE that fails with IOERR (the connection between the servers
// failing, or timing out) leaves its key at the old node, and perhaps at
// the new one too, its answer lost: that key and the rest move with
// DUMP/RESTORE, as after an IOERR of the whole batch, rather than fail
// the move midway with keys that the fallback would move.
//
// Out of a cluster, the keys (of one slot: batchOf) may move to another
// master of it meanwhile: the MIGRATE of a key, or settleBusy's DEL,
// answers MOVED, and that key and the rest are moved from the master
// named (followMoved), as a batch's MIGRATE is. Each MIGRATE runs in a
// transaction there (migrateCounted): a bare MIGRATE runs at a slot's
// migrating master even for a key that has left for the importing one,
// and answers NOKEY, the key left behind; the transaction answers ASK,
// and that key alone is moved from the importing master.
func (m *mover) migrateEach(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, sizes []int64) (int, error) {
	return m.migrateEachAt(ctx, conn, src, dst, keys, sizes, 0, false)
}

// migrateEachAt is migrateEach after hop MOVED or ASK redirects of the
// old cluster; asking as for migrateAt.
func (m *mover) migrateEachAt(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string, sizes []int64, hop int, asking bool) (int, error) {
	moved := 0
	// follow follows a MOVED or ASK with which src refused key i: after
	// a MOVED keys[i:] move from the master it names (the slot went
	// there: rest), after an ASK key i alone.
	follow := func(i int, cmd string, err error) (n int, rest bool, _ error) {
		what := fmt.Sprintf("moving %q", keys[i])
		end := i + 1
		if !isAsk(err) {
			end, rest = len(keys), true
		}
		n, err = m.followMoved(ctx, src, dst, cmd, what, err, hop, func(c redis.Conn, at shard.Node, hop int, asking bool) (int, error) {
			return m.migrateEachAt(ctx, c, at, dst, keys[i:end], sizes[min(i, len(sizes)):min(end, len(sizes))], hop, asking)
		})
		return n, rest, err
	}
	for i, k := range keys {
		args, err := m.migrateArgs(dst, []string{k})
		if err != nil {
			return moved, &shard.NodeError{Node: dst, Err: err}
		}
		var size int64
		if i < len(sizes) {
			size = sizes[i]
		}
		wait := m.migrateWait(size)
		if testHookEach != nil {
			testHookEach(src, k)
		}
		var reply any
		err = m.watchedMigrate(ctx, conn, src, dst, 1, wait, func(c redis.Conn) error {
			if m.fromCluster() {
				n, err := migrateCounted(c, wait, args, []string{k}, asking)
				if reply = "OK"; n == 0 {
					reply = "NOKEY"
				}
				return err
			}
			var err error
			reply, err = redis.DoWithTimeout(c, wait, "MIGRATE", args...)
			return err
		})
		switch {
		case isReplyError(err, "BUSYKEY"):
			// Not moved by this MIGRATE, whatever the DEL does: the new
			// owner's copy stays.
			same, err := m.settleBusy(ctx, conn, dst, k, asking)
			if same {
				moved++
			}
			if m.oldMoved(err) {
				// The DEL was refused: the key moved with its slot, or
				// left for the importing master.
				n, rest, err := follow(i, "DEL", err)
				if moved += n; rest || err != nil {
					return moved, err
				}
				continue
			}
			if err != nil {
				return moved, m.migrateErr(src, dst, fmt.Sprintf("moving %q", k), err)
			}
		case errors.Is(err, ErrOldNodeStalled):
			return moved, err
		case isReplyError(err, "IOERR"):
			n, err := m.dumpMoveAt(ctx, conn, src, dst, keys[i:], hop, asking, false)
			return moved + n, err
		case m.oldMoved(err):
			n, rest, err := follow(i, "MIGRATE", err)
			if moved += n; rest || err != nil {
				return moved, err
			}
		case err != nil:
			return moved, m.migrateErr(src, dst, fmt.Sprintf("moving %q", k), err)
		case !isNoKey(reply):
			moved++ // the new owner's copy went away meanwhile
		}
	}
	return moved, nil
}

// isRedirect reports whether err is a cluster's MOVED or ASK.
func isRedirect(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	code := cluster.ErrorCode(string(re))
	return code == "MOVED" || code == "ASK"
}

// isAsk reports whether err is an ASK redirect.
func isAsk(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && cluster.ErrorCode(string(re)) == "ASK"
}

// settleBusy deletes the old copy (conn) of key k, which the new owner
// dst has too (BUSYKEY: its copy wins), and reports whether the new
// owner's copy is the very value of the old one (their DUMPs are equal,
// or their values are: sameValueAt, the new node may encode it otherwise)
// with the same expiry (sameExpiry: DUMP carries no TTL): a copy the
// mover itself restored or carried before losing the answer (a MIGRATE
// that failed with IOERR, a DUMP/RESTORE that failed before its deletes),
// which counts as moved, as its DUMP/RESTORE path counts a key already
// restored (restoreBefore's SAME). Any other copy, the same value with
// another expiry included (a client's write), counts as busy once the old
// one is deleted; a comparison that cannot be made (DUMP refused, the new
// node unreachable from the mover) counts busy too, as before it was
// made.
func (m *mover) settleBusy(ctx context.Context, conn redis.Conn, dst shard.Node, k string, asking bool) (same bool, err error) {
	old, oldTTL, err := dumpAndTTL(ctx, conn, k, asking)
	if err == nil {
		if dconn, derr := m.pools.Get(ctx, dst.Addr); derr == nil {
			theirs, theirTTL, derr := dumpAndTTL(ctx, dconn, k, false)
			same = derr == nil && sameExpiry(oldTTL, theirTTL, m.expirySlack()) &&
				(bytes.Equal(old, theirs) || m.sameValueAt(ctx, dconn, false, k, old))
			dconn.Close()
		}
	}
	var n int
	if err = sendAsking(conn, asking); err == nil {
		if err = conn.Send("DEL", k); err == nil {
			err = conn.Flush()
		}
		if err == nil {
			n, err = redis.Int(receiveAsked(conn, asking, func(c redis.Conn) (any, error) { return redis.ReceiveContext(c, ctx) }))
		}
	}
	switch {
	case err != nil || n == 0:
		// The old copy stays (the DEL failed), or was gone already
		// (moved or deleted by a client): neither moved nor busy here.
		return false, err
	case same:
		return true, nil
	}
	m.busy.Add(1)
	return false, nil
}

// dumpAndTTL returns DUMP and PTTL of key k (conn), in one round trip,
// each after an ASKING when asking.
func dumpAndTTL(ctx context.Context, conn redis.Conn, k string, asking bool) ([]byte, int64, error) {
	sendAsking(conn, asking)
	conn.Send("DUMP", k)
	sendAsking(conn, asking)
	conn.Send("PTTL", k)
	if err := conn.Flush(); err != nil {
		return nil, 0, err
	}
	receive := func(c redis.Conn) (any, error) { return redis.ReceiveContext(c, ctx) }
	payload, err := redis.Bytes(receiveAsked(conn, asking, receive))
	ttl, err2 := redis.Int64(receiveAsked(conn, asking, receive))
	if err == nil {
		err = err2
	}
	return payload, ttl, err
}

// migrateChunk is how much of its payload MIGRATE writes at once, each
// write bounded by its timeout (Redis's migrateCommand).
const migrateChunk = 64 << 10

// migrateWait is how long the mover waits for a MIGRATE of keys holding
// size bytes in all (MEMORY USAGE, which the payload does not exceed but for
// sampled aggregates) before it gives up on the old node. MIGRATE's
// timeout bounds each of its I/O operations, not the whole command: its
// connection, each write of up to 64 KiB of its payload, and each answer
// it reads. A batch of large values to a new node behind a slow link, or
// too loaded to restore them fast, legitimately takes many Timeouts (a
// wait of Timeout plus a second gave up on the connection while the old
// node went on moving, the count of its moves lost). So the wait allows
// Timeout for the connection, one per 64 KiB of payload, and one for the
// answers, plus a second; it is bounded, so an old node that hangs
// fails the move after it. The payload's transfer and the new node's
// restoring grow with the bytes, which the allowance per 64 KiB covers.
//
// A wait longer than a live MIGRATE of its keys can go without the new
// node seeing any of it (stallAfter) is cut short by the stall watch
// (watchedMigrate, stall.go), in batches and key by key (migrateEach)
// alike: a hung old node then fails the move with ErrOldNodeStalled
// about stallAfter after the new node last saw the MIGRATE. The watch
// follows the MIGRATE's connections at the new node (other clients'
// traffic there does not hide a hung old node; another old node's
// MIGRATE to it delays the finding), and a new node it cannot reach
// proves nothing: the wait is the bound that always holds, and must
// never be shorter than a live MIGRATE may take.
func (m *mover) migrateWait(size int64) time.Duration {
	chunks := max(0, size+migrateChunk-1) / migrateChunk
	return time.Duration(2+chunks)*m.opts.Timeout + time.Second
}

// migrateCounted sends MULTI, EXISTS keys, MIGRATE args (which carries
// keys), EXISTS keys and EXEC on conn, and returns how many of keys the
// MIGRATE moved: those there before it ran and gone after (the old node
// runs the transaction on its single thread, nothing in between, and
// Redis 7 reads the clock once for it, so a key expiring meanwhile is
// gone for all three), and MIGRATE's own error (a redis.Error: BUSYKEY,
// IOERR, ...), with which moved still counts the keys it moved before
// failing. It waits up to wait for each reply.
//
// When asking, an ASKING goes first: the keys left for the node conn
// reaches, which imports their slot. Its flag lasts the transaction.
func migrateCounted(conn redis.Conn, wait time.Duration, args []any, keys []string, asking bool) (moved int, err error) {
	exists := make([]any, len(keys))
	for i, k := range keys {
		exists[i] = k
	}
	if err := sendAsking(conn, asking); err != nil {
		return 0, err
	}
	for _, cmd := range []struct {
		name string
		args []any
	}{{"MULTI", nil}, {"EXISTS", exists}, {"MIGRATE", args}, {"EXISTS", exists}, {"EXEC", nil}} {
		if err := conn.Send(cmd.name, cmd.args...); err != nil {
			return 0, err
		}
	}
	if err := conn.Flush(); err != nil {
		return 0, err
	}
	replies := 4 // MULTI's OK, then QUEUED three times
	if asking {
		replies++ // ASKING's OK first
	}
	var queueErr error // a command refused when queued aborts the EXEC
	for range replies {
		if _, err := redis.ReceiveWithTimeout(conn, wait); err != nil {
			var re redis.Error
			if !errors.As(err, &re) {
				return 0, err
			}
			if queueErr == nil {
				queueErr = err
			}
		}
	}
	reply, err := redis.Values(redis.ReceiveWithTimeout(conn, wait))
	if err != nil {
		if queueErr != nil {
			return 0, queueErr
		}
		return 0, err
	}
	if len(reply) != 3 {
		return 0, fmt.Errorf("EXEC of EXISTS, MIGRATE and EXISTS: a reply of %d elements", len(reply))
	}
	before, err := redis.Int(reply[0], nil)
	if err != nil {
		return 0, fmt.Errorf("EXISTS: %w", err)
	}
	after, err := redis.Int(reply[2], nil)
	if err != nil {
		return 0, fmt.Errorf("EXISTS after MIGRATE: %w", err)
	}
	moved = max(0, before-after)
	if re, ok := reply[1].(redis.Error); ok {
		return moved, re
	}
	return moved, nil
}

// migrateErr is the error of a MIGRATE (what) from src to dst that failed
// with err. An I/O error between the servers, or the new node's protocol
// error, also comes from a value the new node refuses: it closes the
// connection of one over its proto-max-bulk-len or
// client-query-buffer-limit, which the bare error does not say.
func (m *mover) migrateErr(src, dst shard.Node, what string, err error) error {
	err = hidePassword(err, m.opts.To.Pool.Password) // secret.go
	if isReplyError(err, "IOERR") || isReplyError(err, "Protocol error") {
		err = fmt.Errorf("%w (the old node could not reach the new one, or the new node closed the connection, as it does for a value over its proto-max-bulk-len or client-query-buffer-limit: raise them, or move that key otherwise)", err)
	}
	if aclRefusal(err) {
		err = &permissionError{err: err}
	}
	return &shard.NodeError{Node: src, Err: fmt.Errorf("%s to %s: %w", what, dst, err)}
}

// isNoKey reports MIGRATE's answer when none of its keys was there.
func isNoKey(reply any) bool {
	s, ok := reply.(string)
	return ok && s == "NOKEY"
}

// migrateArgs returns MIGRATE's arguments that move keys to dst: the
// address the old node reaches dst at (Options.Addrs, by dst's address or
// by the one it resolves to, a Sentinel shard's master), then the keys.
func (m *mover) migrateArgs(dst shard.Node, keys []string) ([]any, error) {
	t := migrateTo{addrs: m.opts.Addrs, addrOf: m.addrOf, pool: m.opts.To.Pool, timeout: m.opts.Timeout}
	return t.args(dst, false, keys)
}

// migrateTo says how an old node's MIGRATE reaches the new nodes: addrs
// maps a new node's address (as dialed, or as a Sentinel shard resolves
// to) to the one the old nodes reach it at; addrOf resolves a node (nil:
// its own address); pool gives the database and the credentials (AUTH or
// AUTH2) for the new node; timeout is MIGRATE's.
type migrateTo struct {
	addrs   map[string]string
	addrOf  func(shard.Node) (string, error)
	pool    pool.Options
	timeout time.Duration
}

// target returns the address the old nodes reach dst at.
func (t migrateTo) target(dst shard.Node) (string, error) {
	addr := t.addrs[dst.Addr]
	if addr == "" && t.addrOf != nil {
		var err error
		if addr, err = t.addrOf(dst); err != nil {
			return "", err
		}
		if a := t.addrs[addr]; a != "" {
			addr = a
		}
	}
	if addr == "" {
		addr = dst.Addr
	}
	return addr, nil
}

// args returns MIGRATE's arguments that move keys to dst, with COPY
// (the keys stay at the old node too) when copyKeys.
func (t migrateTo) args(dst shard.Node, copyKeys bool, keys []string) ([]any, error) {
	addr, err := t.target(dst)
	if err != nil {
		return nil, err
	}
	// "[fd00::1]:6379" names host fd00::1: MIGRATE takes it bare.
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		i := strings.LastIndex(addr, ":")
		host, port = addr[:max(i, 0)], addr[i+1:]
	}
	p := t.pool
	args := []any{host, port, "", p.DB, t.timeout.Milliseconds()}
	if copyKeys {
		args = append(args, "COPY")
	}
	if p.Password != "" {
		if p.Username != "" {
			args = append(args, "AUTH2", p.Username, p.Password)
		} else {
			args = append(args, "AUTH", p.Password)
		}
	}
	args = append(args, "KEYS")
	for _, k := range keys {
		args = append(args, k)
	}
	return args, nil
}

func (m *mover) count(src, dst shard.Node, keys, size int64) {
	m.moved.Add(keys)
	m.bytes.Add(size)
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.flows[[2]string{src.Addr, dst.Addr}]
	if f == nil {
		f = &Flow{From: src.Addr, To: dst.Addr}
		m.flows[[2]string{src.Addr, dst.Addr}] = f
	}
	f.Keys += keys
	f.Bytes += size
}

func (m *mover) report() *Report {
	rep := &Report{Scanned: m.scanned.Load(), Moved: m.moved.Load(), Busy: m.busy.Load(), Bytes: m.bytes.Load(), Strays: m.strays.Load()}
	m.mu.Lock()
	for _, f := range m.flows {
		rep.Flows = append(rep.Flows, *f)
	}
	m.mu.Unlock()
	slices.SortFunc(rep.Flows, func(a, b Flow) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
	return rep
}

// reportProgress calls Options.Progress every 200ms until the returned
// function is called, which reports once more with Done set.
func (m *mover) reportProgress() func() {
	if m.opts.Progress == nil {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				m.opts.Progress(m.progress(true))
				return
			case <-t.C:
				m.opts.Progress(m.progress(false))
			}
		}
	}()
	return func() { close(stop); <-done }
}

func (m *mover) progress(done bool) Progress {
	now := time.Now()
	p := Progress{Total: m.total, Scanned: m.scanned.Load(), Moved: m.moved.Load(), Bytes: m.bytes.Load(),
		Elapsed: now.Sub(m.start), Done: done}
	r, span := m.rates(now, rateSample{scanned: p.Scanned, moved: p.Moved, bytes: p.Bytes}, done)
	p.KeysPerSecond, p.MovedPerSecond, p.BytesPerSecond = r[0], r[1], r[2]
	if left := p.Total - p.Scanned; left > 0 && p.KeysPerSecond > 0 && (p.Moved > 0 || span >= minETASpan) && !done {
		p.ETA = time.Duration(float64(left) / p.KeysPerSecond * float64(time.Second))
	}
	return p
}

// minETASpan is how much of the scan the rate must span before an ETA
// is given while no key has moved yet: until then it is mostly keys that
// stay, counted at once while the first batch waits for the pace (a move
// of 600 keys at 150 keys/s read "ETA 0s" 200 ms in, with nothing moved).
const minETASpan = time.Second

// rateWindow is the span of the scan over which Progress.KeysPerSecond,
// MovedPerSecond and BytesPerSecond, and so the ETA, are measured: recent
// enough that a pause (an operator's CLIENT PAUSE, an old node that was
// slow) weighs on them for seconds only, long enough to hold many batches
// at any pace.
const rateWindow = 10 * time.Second

// rateSample is the counts of keys scanned and moved, and of bytes
// moved, at a moment.
type rateSample struct {
	at                    time.Time
	scanned, moved, bytes int64
}

// rates returns the keys scanned, the keys moved and the bytes moved per
// second (cur: the counts by now) over the last rateWindow of the scan,
// or since the scan began when that is more recent; done: over the whole
// scan. The time before the scan, the wait for the fence above all, is
// not counted: it made the rate of a scan at a pace of 400 keys/s read
// 150 keys/s, and the ETA thrice the time left. span is the time the
// rates are measured over.
func (m *mover) rates(now time.Time, cur rateSample, done bool) (r [3]float64, span time.Duration) {
	cur.at = now
	base := rateSample{at: m.scanStart}
	if base.at.IsZero() {
		base.at = m.start
	}
	if !done {
		m.samples = append(m.samples, cur)
		cut := now.Add(-rateWindow)
		for len(m.samples) > 1 && !m.samples[1].at.After(cut) {
			m.samples = m.samples[1:] // the first is kept: the last at or before cut
		}
		if first := m.samples[0]; !first.at.After(cut) {
			base = first
		}
	}
	span = now.Sub(base.at)
	s := span.Seconds()
	if s <= 0 {
		return [3]float64{}, 0
	}
	return [3]float64{float64(cur.scanned-base.scanned) / s, float64(cur.moved-base.moved) / s, float64(cur.bytes-base.bytes) / s}, span
}

// memoryUsage reads the replies of MEMORY USAGE of keys (measureAndScan
// sends them pipelined): their sizes; gone keys count 0, and so do keys
// an old cluster's master redirects (MOVED, ASK), which measureAndScan
// then measures where they went (measureRedirected). A refusal is
// returned as the redis.Error it is.
//
// It samples, as MEMORY USAGE does by default (5 elements of an
// aggregate, scaled by its length): SAMPLES 0 would be exact but visits
// every element on the old node's single thread, about half a second or
// more for a hash of a million fields, during which the node serves
// nothing else; in a dry run, which is meant to cost nothing, that was
// the whole cost (TestReview10DryRunOfAHugeHashDoesNotBlockTheOldNode).
// The figure is the size of the value in the old node's memory, exact for
// strings and for aggregates of like elements, an estimate for others;
// it is what Report.Bytes, Flow.Bytes and BytesPerSecond count.
func memoryUsage(replies []any) ([]int64, error) {
	sizes := make([]int64, len(replies))
	for i, r := range replies {
		n, err := redis.Int64(r, nil)
		switch {
		case err == nil || errors.Is(err, redis.ErrNil):
			sizes[i] = n
		case isRedirect(err):
			// A key of a slot being moved inside an old cluster that
			// has left the node (ASK), or of a slot gone (MOVED): moved
			// from where it is, unmeasured.
			sizes[i] = 0
		default:
			return nil, fmt.Errorf("MEMORY USAGE: %w", err)
		}
	}
	return sizes, nil
}

// isReplyError reports a server error reply that names code. MIGRATE
// wraps its target's errors ("ERR Target instance replied with error:
// BUSYKEY ..."), so the code is looked for anywhere in the text.
func isReplyError(err error, code string) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.Contains(string(re), code)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// appendNodes appends the nodes of more whose address nodes lacks.
func appendNodes(nodes, more []shard.Node) []shard.Node {
	out := slices.Clone(nodes)
	for _, n := range more {
		if !slices.ContainsFunc(out, func(o shard.Node) bool { return o.Addr == n.Addr }) {
			out = append(out, n)
		}
	}
	return out
}
