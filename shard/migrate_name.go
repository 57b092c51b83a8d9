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
//
// <instance> is random per Client, <topology> is TopologyID. A client
// names its pooled connections so when Pool.ClientName is AutoClientName
// ("client_name=auto" in a URL); while a migration is on it also keeps one
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
	if pair, isMig := strings.CutPrefix(rest, "migrating:"); isMig {
		from, to, found := strings.Cut(pair, ">")
		if !found || from == "" || to == "" {
			return ClientName{}, false
		}
		n.Migrating, n.From, n.To = true, from, to
		return n, true
	}
	n.Topology = rest
	return n, true
}

// String formats n by the convention.
func (n ClientName) String() string {
	if n.Migrating {
		return "shardis:" + n.Instance + ":migrating:" + n.From + ">" + n.To
	}
	return "shardis:" + n.Instance + ":" + n.Topology
}

// newInstanceID returns a random name for one Client.
func newInstanceID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// beacons are the named idle connections a migrating client keeps to the
// old nodes; a background loop reopens the ones that break.
type beacons struct {
	c    *Client
	name string
	addr []string

	mu    sync.Mutex
	conns map[string]beaconConn
	stop  chan struct{}
	done  chan struct{}
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
	b := &beacons{c: c, conns: map[string]beaconConn{}, stop: make(chan struct{}), done: make(chan struct{}),
		name: ClientName{Instance: c.instance, Migrating: true, From: m.fromID, To: m.toID}.String()}
	for addr := range m.src {
		b.addr = append(b.addr, addr)
	}
	b.check(ctx)
	c.bg.Add(1)
	go b.loop()
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
		if _, err := redis.DoWithTimeout(conn, time.Second, "CLIENT", "SETNAME", b.name); err != nil {
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
	defer b.c.bg.Done()
	defer close(b.done)
	t := time.NewTicker(beaconRecheck)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.c.stop:
			b.closeConns()
			return
		case <-t.C:
			b.check(context.Background())
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
