package reshard

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// Misplaced is a key found on a node that does not own it.
type Misplaced struct {
	Key   string
	Node  string // where it is
	Owner string // where it belongs
}

// String describes m.
func (m Misplaced) String() string {
	return fmt.Sprintf("%q on %s, owned by %s", m.Key, m.Node, m.Owner)
}

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	// Scanned counts the keys looked at, the fences' markers left out;
	// a key SCAN returns twice on consecutive pages counts once, one that
	// comes back from further back counts again (see Report.Scanned).
	Scanned int64
	// Misplaced counts the keys found on a node that does not own them,
	// as Scanned counts them.
	Misplaced int64
	// Pending counts, during a migration, keys still at their old owner:
	// not yet moved, which is expected until the mover has run.
	Pending int64
	// Strays counts, during a migration (and in the verification that
	// ends a move), the misplaced keys found on a node that neither
	// topology places them on, for example left there by auto-eject. The
	// mover leaves them where they are (they may be stale copies): move
	// or delete them by hand.
	Strays int64
	// Samples holds up to VerifyOptions.Samples misplaced keys.
	Samples []Misplaced
	// PerNode counts misplaced keys by the node they were found on.
	PerNode map[string]int64
}

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Nodes are more addresses to scan (for example a shard that left the
	// ring): every key found there is misplaced unless the topology
	// routes it there.
	Nodes []string
	// Samples bounds VerifyReport.Samples (0: 20).
	Samples int
}

// Verify scans every node of cfg (during a migration, the old topology's
// nodes too) and reports the keys that sit on a node that does not own
// them. It changes nothing.
func Verify(ctx context.Context, cfg shard.Config, opts VerifyOptions) (*VerifyReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, a := range opts.Nodes {
		if err := checkNodeAddr(a); err != nil {
			return nil, err
		}
	}
	// Each topology is read by a client of its own that does not migrate:
	// a migrating one would keep beacons on the old nodes while the scan
	// runs, which Finish takes for a process still on the migration. Keys
	// are judged by the new topology; during a migration those that the
	// old one places where they are count as not moved yet.
	c, err := placementClient(ctx, cfg, cfg.Pool)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	to := c.Router()
	var from shard.Router
	if m := cfg.Migration; m != nil && m.From != nil {
		// Reached with the client's pool options, as a migrating
		// client reaches both topologies.
		old, err := placementClient(ctx, *m.From, cfg.Pool)
		if err != nil {
			return nil, errtext.Errorf("shardis: migration from: %w", err)
		}
		defer old.Close()
		from = old.Router()
	}
	pools, err := pool.NewSet(moverPool(cfg.Pool))
	if err != nil {
		return nil, errtext.Errorf("%w: %w", shard.ErrBadConfig, err)
	}
	defer pools.Close()
	nodes := to.Nodes()
	if from != nil {
		nodes = appendNodes(nodes, from.Nodes())
	}
	for _, a := range opts.Nodes {
		nodes = appendNodes(nodes, []shard.Node{{Name: a, Addr: a}})
	}
	if err := followNodes(c, pools, nodes); err != nil { // a Sentinel shard: its master (servers.go)
		return nil, err
	}
	// A server named twice (localhost and 127.0.0.1; a --nodes entry
	// spelling a topology's node another way) is scanned once, under the
	// topology's address, and a key routed to either spelling is on its
	// owner there (servers.go).
	al := aliases(ctx, pools, nodes)
	nodes = slices.DeleteFunc(nodes, func(n shard.Node) bool { _, ok := al[n.Addr]; return ok })
	return verifyNodes(ctx, pools, to, nodes, from, from, opts.Samples, al)
}

// placementClient returns a client of topology cfg, without its
// migration, that reaches its nodes with pool options po and sends no
// command of its own: its Router places keys.
func placementClient(ctx context.Context, cfg shard.Config, po pool.Options) (*shard.Client, error) {
	cfg.Migration = nil
	cfg.Pool = moverPool(po)
	cfg.Health.Interval = -1
	cfg.Health.AutoEject = false
	return shard.New(ctx, cfg)
}

// verifyNodes scans nodes in parallel for keys that to does not place
// there (those that from places there count as pending; nil: none does).
// old, the old topology of a migration (nil: none), tells strays among
// the misplaced keys: those that it does not place where they are either.
// al maps other spellings of a scanned node's address to it (nil: none).
func verifyNodes(ctx context.Context, pools *pool.Set, to shard.Router, nodes []shard.Node, from, old shard.Router, samples int, al map[string]string) (*VerifyReport, error) {
	canon := func(a string) string {
		if c, ok := al[a]; ok {
			return c
		}
		return a
	}
	if samples <= 0 {
		samples = 20
	}
	rep := &VerifyReport{PerNode: map[string]int64{}}
	_, toCluster := to.(*shard.ClusterRouter)
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = make([]error, len(nodes))
	)
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The slots n imports (verify_importing.go), asked once it
			// holds a key its cluster's map places elsewhere.
			var importing map[int]bool
			asked := false
			errs[i] = scanNode(ctx, pools, n, func(keys []string) error {
				var bad []Misplaced
				var pending, markers, strays int64
				for _, k := range keys {
					if shard.IsFenceKey(k) {
						markers++ // a fence's marker sits on every old node
						continue
					}
					owner, err := to.Route(k)
					if err != nil {
						return err
					}
					if canon(owner.Addr) == n.Addr {
						continue
					}
					if toCluster {
						if !asked {
							importing, asked = importingSlots(ctx, pools, n), true
						}
						if importing[cluster.Slot(k)] {
							continue // where the owner's ASK sends it
						}
					}
					if from != nil {
						if o, err := from.Route(k); err == nil && canon(o.Addr) == n.Addr {
							pending++
							continue
						}
					}
					if old != nil {
						if o, err := old.Route(k); err != nil || canon(o.Addr) != n.Addr {
							strays++
						}
					}
					bad = append(bad, Misplaced{Key: k, Node: n.Addr, Owner: owner.Addr})
				}
				mu.Lock()
				defer mu.Unlock()
				rep.Scanned += int64(len(keys)) - markers
				rep.Pending += pending
				rep.Strays += strays
				rep.Misplaced += int64(len(bad))
				if len(bad) > 0 {
					rep.PerNode[n.Addr] += int64(len(bad))
				}
				for _, b := range bad {
					if len(rep.Samples) < samples {
						rep.Samples = append(rep.Samples, b)
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// scanNode calls fn with every batch of keys that SCAN returns on n, each
// key once: SCAN returns a key again when the node's table shrinks
// between two of its calls (the keys of the buckets that fold into the
// one it goes on from, visited just before), which a node whose keys are
// deleted meanwhile (an old node of a running move, keys moved on touch)
// does mid-scan; such a key was counted twice, a misplaced one reported
// twice. Keys the page before held are left out, as the mover does.
func scanNode(ctx context.Context, pools *pool.Set, n shard.Node, fn func([]string) error) error {
	conn, err := pools.Get(ctx, n.Addr)
	if err != nil {
		return &shard.NodeError{Node: n, Err: err}
	}
	defer conn.Close()
	cursor := "0"
	var prev map[string]struct{} // the keys of the page before
	for {
		vals, err := redis.Values(redis.DoContext(conn, ctx, "SCAN", cursor, "COUNT", 1000))
		if err != nil || len(vals) != 2 {
			return &shard.NodeError{Node: n, Err: fmt.Errorf("SCAN: %w", scanErr(err, vals))}
		}
		cursor, _ = redis.String(vals[0], nil)
		keys, err := redis.Strings(vals[1], nil)
		if err != nil {
			return &shard.NodeError{Node: n, Err: fmt.Errorf("SCAN: %w", err)}
		}
		keys, prev = unseen(keys, prev) // move.go
		if err := fn(keys); err != nil {
			return err
		}
		if cursor == "0" {
			return nil
		}
	}
}

// misplacedErr is the error of a verification (after a move, or before
// finishing) that found misplaced keys: it tells keys that the mover
// would move (run it again) from strays, which it leaves.
func misplacedErr(v *VerifyReport) error {
	switch {
	case v.Strays == 0:
		return fmt.Errorf("%w: %d (e.g. %s); run the mover again", ErrMisplaced, v.Misplaced, v.Samples[0])
	case v.Strays == v.Misplaced:
		return fmt.Errorf("%w: %d stray keys (e.g. %s), on a node that neither topology places them on: the mover leaves them; move or delete them by hand", ErrMisplaced, v.Misplaced, v.Samples[0])
	}
	return fmt.Errorf("%w: %d (e.g. %s), %d of them stray keys on a node that neither topology places them on, which the mover leaves (move or delete them by hand); run the mover again for the others", ErrMisplaced, v.Misplaced, v.Samples[0], v.Strays)
}

// checkNodeAddr accepts an entry of VerifyOptions.Nodes that is
// host:port. Another one fails with ErrBadConfig, quoted without what
// precedes an '@' (credentials pasted with the address: they belong in
// the config) and without a query.
func checkNodeAddr(a string) error {
	quoted := addrkey.Redact(a)
	if h, _, ok := strings.Cut(quoted, "?"); ok {
		quoted = h + "?..."
	}
	if addrkey.HasCredentials(a) || strings.Contains(a, "://") {
		return fmt.Errorf("%w: verify node %q: want host:port (credentials go in the config)", shard.ErrBadConfig, quoted)
	}
	host, port, err := net.SplitHostPort(a)
	if p, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%w: verify node %q: want host:port", shard.ErrBadConfig, quoted)
	}
	return nil
}
