package shard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The connection-naming convention (CLIENT SETNAME) that lets the mover see
// which topology each process routes by:
//
//	shardis:<instance>:<topology>                   a client's connections
//	shardis:<instance>:migrating:<from>><to>        one per old node while migrating
//	shardis:<instance>:fenced:<from>><to>           ... once past the fence
//	shardis:<instance>:armed:<from>><to>            ... once moving keys
//
// <instance> is random per Client, <topology> is TopologyID of the
// topology the client routes by now: its own, or, while a migration waits
// behind its fence, the old one. A client names its pooled connections so
// when Pool.ClientName is AutoClientName ("client_name=auto" in a URL),
// and renames them whenever its routing changes (StartMigration, the
// fence's switch, FinishMigration, AbortMigration; renameConns): idle
// connections at once, borrowed ones when they come back, the automatic
// pipelines' by taking a fresh connection (pool.Set.SetClientName).
// Subscription connections keep the name they were dialed with: a
// subscribed connection cannot run CLIENT SETNAME (RESP2 refuses it
// between its messages); they route no key, and those opened after a
// change carry the new name. While a migration is on a client also keeps one
// idle "beacon" connection to every old node, named with both topologies,
// so that CLIENT LIST on an old node shows that the process routes by the
// new topology and moves keys. The mover refuses to start while a
// connection routes by one topology alone, and (unless told otherwise)
// while a connection has no name of the convention.

// AutoClientName, as Pool.ClientName, names a client's connections by the
// convention above: "shardis:<instance>:<topology>".
const AutoClientName = "auto"

// ClientName is a parsed connection name of the convention.
type ClientName struct {
	Instance  string
	Topology  string // the topology a plain client routes by
	Migrating bool   // a beacon: the instance migrates From -> To
	From, To  string
	Phase     MigrationPhase // a beacon's phase in the fence
}

// ParseClientName reads a connection name of the convention; ok is false
// for any other name.
func ParseClientName(name string) (n ClientName, ok bool) {
	rest, found := strings.CutPrefix(name, "shardis:")
	if !found {
		return n, false
	}
	inst, rest, found := strings.Cut(rest, ":")
	if !found || inst == "" || rest == "" {
		return n, false
	}
	n.Instance = inst
	for _, p := range []MigrationPhase{PhaseWaiting, PhaseFenced, PhaseArmed} {
		pair, isMig := strings.CutPrefix(rest, p.String()+":")
		if !isMig {
			continue
		}
		from, to, found := strings.Cut(pair, ">")
		if !found || from == "" || to == "" {
			return ClientName{}, false
		}
		n.Migrating, n.From, n.To, n.Phase = true, from, to, p
		return n, true
	}
	n.Topology = rest
	return n, true
}

// String formats n by the convention.
func (n ClientName) String() string {
	if n.Migrating {
		return "shardis:" + n.Instance + ":" + n.Phase.String() + ":" + n.From + ">" + n.To
	}
	return "shardis:" + n.Instance + ":" + n.Topology
}

// newInstanceID returns a random name for one Client.
func newInstanceID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// initialRoutingID is the topology a client built from cfg routes by
// first: the old one while its migration waits for the fence.
func initialRoutingID(cfg Config, ids configIDs) string {
	if m := cfg.Migration; m != nil && m.From != nil && !m.Armed {
		return ids.from
	}
	return ids.id
}

// configIDs are the TopologyIDs of a Config given to New and of its
// Migration.From (when set), worked out once, before anything starts.
type configIDs struct{ id, from string }

// topologyIDs returns cfg's configIDs; a panic of a Router's code they
// run is the error (checkedTopologyID).
func topologyIDs(cfg Config) (configIDs, error) {
	var ids configIDs
	var err error
	if ids.id, err = checkedTopologyID(cfg); err != nil {
		return ids, err
	}
	if m := cfg.Migration; m != nil && m.From != nil {
		ids.from, err = checkedTopologyID(*m.From)
	}
	return ids, err
}

// routingID is the TopologyID of the topology the client routes by now.
func (c *Client) routingID() string {
	if t := c.topo.Load(); t != nil { // a ring or router client, or one that became a cluster client
		return t.id
	}
	if m := c.mig.Load(); m != nil && m.phase.Load() == int32(PhaseWaiting) {
		return m.fromID // a cluster client still routing by the old topology
	}
	return c.baseID
}

// renameConns names the client's pooled connections after the topology
// it routes by now, when they are named by the convention
// (AutoClientName) and it changed. The renaming of idle connections ends
// with ctx (the caller's: StartMigration's, AbortMigration's), after a
// dial and a read timeout at the latest, or at Close, so that a hung node
// does not hold the caller up; idle connections that cannot be renamed in
// time are renamed when next borrowed.
func (c *Client) renameConns(ctx context.Context) {
	if !c.autoName {
		return
	}
	c.nameMu.Lock()
	defer c.nameMu.Unlock()
	// Computed under the lock: of two renames racing, the later sees the
	// later routing.
	name := ClientName{Instance: c.instance, Topology: c.routingID()}.String()
	if c.pools.ClientName() == name {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout()+c.readTimeout)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)() // Close ends it too
	_ = c.pools.SetClientName(ctx, name)      // the name is valid; a ctx end leaves the rest to the borrow check
	c.connNames.Add(1)
}

// beacons are the named idle connections a migrating client keeps to the
// old nodes; a background loop reopens the ones that break.
type beacons struct {
	c     *Client
	m     *migState
	key   string // the fence's marker
	name  string
	named MigrationPhase // the phase in name
	addr  []string

	mu    sync.Mutex
	conns map[string]beaconConn
	stop  chan struct{}
	done  chan struct{}
	// ctx is the loop's, cancelled by close (FinishMigration,
	// AbortMigration) and Close: it ends a switch that waits for the
	// commands planned by the old topology (advance), as the migration it
	// switches is being left and close waits for the loop.
	ctx    context.Context
	cancel context.CancelFunc
}

type beaconConn struct {
	conn  redis.Conn
	abort func()
}

// beaconRecheck is how often broken beacons are reopened.
const beaconRecheck = time.Second

// openBeacons opens a beacon to every old node of m (those that answer)
// and starts the loop that keeps them open.
func (c *Client) openBeacons(ctx context.Context, m *migState) *beacons {
	b := &beacons{c: c, m: m, conns: map[string]beaconConn{}, stop: make(chan struct{}), done: make(chan struct{}),
		key:  FenceKey(m.fromID, m.toID),
		name: c.beaconName(m, MigrationPhase(m.phase.Load())), named: MigrationPhase(m.phase.Load())}
	b.ctx, b.cancel = context.WithCancel(c.life)
	for addr := range m.src {
		b.addr = append(b.addr, addr)
	}
	b.check(ctx)
	b.poll(ctx)
	if !c.goTracked(&c.bg, b.loop) {
		close(b.done) // closing: no loop to keep them open
	}
	return b
}

// check opens the missing beacons and drops broken ones.
func (b *beacons) check(ctx context.Context) {
	for _, addr := range b.addr {
		b.mu.Lock()
		bc, ok := b.conns[addr]
		b.mu.Unlock()
		if ok {
			if _, err := redis.DoWithTimeout(bc.conn, time.Second, "PING"); err == nil {
				continue
			}
			bc.abort()
			bc.conn.Close()
			b.mu.Lock()
			delete(b.conns, addr)
			b.mu.Unlock()
		}
		dctx, cancel := context.WithTimeout(ctx, b.c.dialTimeout())
		conn, abort, err := b.c.pools.GetAbortable(dctx, addr, false)
		cancel()
		if err != nil {
			continue
		}
		b.mu.Lock()
		name := b.name
		b.mu.Unlock()
		if _, err := redis.DoWithTimeout(conn, time.Second, "CLIENT", "SETNAME", name); err != nil {
			abort() // its name is not a fresh connection's: never back to the pool
			conn.Close()
			continue
		}
		b.mu.Lock()
		select {
		case <-b.stop:
			abort()
			conn.Close()
		default:
			b.conns[addr] = beaconConn{conn: conn, abort: abort}
		}
		b.mu.Unlock()
	}
}

func (b *beacons) loop() {
	defer close(b.done)
	t := time.NewTicker(beaconRecheck)
	defer t.Stop()
	f := time.NewTicker(FencePoll)
	defer f.Stop()
	ctx := b.ctx
	for {
		select {
		case <-b.stop:
			return
		case <-b.c.stop:
			b.closeConns()
			return
		case <-t.C:
			b.check(ctx)
		case <-f.C:
			b.poll(ctx)
		}
	}
}

// beaconName names m's beacons in phase p.
func (c *Client) beaconName(m *migState, p MigrationPhase) string {
	return ClientName{Instance: c.instance, Migrating: true, From: m.fromID, To: m.toID, Phase: p}.String()
}

// poll reads the fence's marker on every beacon and advances the client
// to the furthest phase any old node shows.
func (b *beacons) poll(ctx context.Context) {
	if p := MigrationPhase(b.m.phase.Load()); p == PhaseArmed {
		if b.named != p {
			b.rename(p) // armed by ArmMigration
		}
		return
	}
	b.mu.Lock()
	conns := make([]redis.Conn, 0, len(b.conns))
	for _, bc := range b.conns {
		conns = append(conns, bc.conn)
	}
	b.mu.Unlock()
	best := PhaseWaiting
	for _, conn := range conns {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		if p := readFence(rctx, conn, b.key); p > best {
			best = p
		}
		cancel()
	}
	if err := b.c.advance(ctx, b.m, best); err != nil {
		return // the switch is not complete: the beacons keep their name
	}
	if p := MigrationPhase(b.m.phase.Load()); p != b.named {
		b.rename(p)
	}
}

// rename names every beacon after phase p (CLIENT SETNAME), so that the
// mover sees the phase in CLIENT LIST; a beacon that fails is dropped
// and reopened under the new name.
func (b *beacons) rename(p MigrationPhase) {
	b.mu.Lock()
	b.name, b.named = b.c.beaconName(b.m, p), p
	name := b.name
	conns := make(map[string]beaconConn, len(b.conns))
	for a, bc := range b.conns {
		conns[a] = bc
	}
	b.mu.Unlock()
	for addr, bc := range conns {
		if _, err := redis.DoWithTimeout(bc.conn, time.Second, "CLIENT", "SETNAME", name); err != nil {
			bc.abort()
			bc.conn.Close()
			b.mu.Lock()
			delete(b.conns, addr)
			b.mu.Unlock()
		}
	}
}

// close stops the loop and closes every beacon (never back to the pool).
func (b *beacons) close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	b.mu.Unlock()
	b.cancel()
	<-b.done
	b.closeConns()
}

func (b *beacons) closeConns() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for addr, bc := range b.conns {
		bc.abort()
		bc.conn.Close()
		delete(b.conns, addr)
	}
}
