package reshard

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// moverName prefixes the names of the mover's own connections.
const moverName = "shardis-reshard"

// CheckClients looks at CLIENT LIST on every node of the old topology and
// reports, as a *ClientsError, every connection of a process that routes
// by one topology alone (a shardis client without a migration beacon for
// from -> to), and — unless allowUnnamed — every connection it cannot
// attribute to a shardis process (a non-shardis client such as a Jedis
// service may route by the old placement). Replication links and movers
// are ignored, except that a Move of from -> to already running (its
// connections on the nodes of either topology) is reported first, as a
// *ClientsError matching ErrMoverAlreadyRunning. See the naming
// convention in shard.ParseClientName.
func CheckClients(ctx context.Context, from, to shard.Config, allowUnnamed bool) error {
	return withMigration(ctx, from, to, func(pools *pool.Set, info shard.MigrationInfo, _ string) error {
		if err := noOtherMover(ctx, pools, info, ""); err != nil { // opposite.go
			return err
		}
		return checkClients(ctx, pools, info, allowUnnamed)
	})
}

// withMigration calls fn with the mover's pools, the description of the
// migration from -> to and the instance name of the mover's routing
// client (its beacons carry it), and closes both afterwards.
func withMigration(ctx context.Context, from, to shard.Config, fn func(*pool.Set, shard.MigrationInfo, string) error) error {
	return withMigrationAs(ctx, from, to, false, func(pools *pool.Set, info shard.MigrationInfo, c *shard.Client) error {
		return fn(pools, info, c.InstanceID())
	})
}

// withMigrationAs is withMigration; named gives the pools' connections a
// Move's name (moverPoolFor), so that another Move, a Finish and the end
// of a Move take the run for one of this migration's movers, still
// running, as Arm's must be (its routing client keeps beacons of the
// migration meanwhile, and it may set the marker). fn is given the
// routing client itself, whose InstanceID its beacons carry and whose
// NodeAddr resolves a Sentinel shard's master.
func withMigrationAs(ctx context.Context, from, to shard.Config, named bool, fn func(*pool.Set, shard.MigrationInfo, *shard.Client) error) error {
	if err := moverPool(to.Pool).Validate(); err != nil { // options no pool takes: refused before any dial
		return errtext.Errorf("%w: %w", shard.ErrBadConfig, err)
	}
	c, err := routingClient(ctx, from, to, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	info, _ := c.Migration()
	po := moverPool(to.Pool)
	if named {
		po = moverPoolFor(to.Pool, info, c.InstanceID())
	}
	pools, err := pool.NewSet(po)
	if err != nil {
		return errtext.Errorf("%w: %w", shard.ErrBadConfig, err)
	}
	defer pools.Close()
	if err := followNodes(c, pools, info.To.Nodes()); err != nil { // servers.go
		return err
	}
	return fn(pools, info, c)
}

// clientEntry is one line of CLIENT LIST.
type clientEntry struct {
	node                  string
	id, addr, name, flags string
	cmd, age              string
}

func checkClients(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, allowUnnamed bool) error {
	fresh := freshConns{}
	for {
		entries, err := clientList(ctx, pools, info)
		if err != nil {
			return err
		}
		if err := judgeClients(entries, info, allowUnnamed, fresh); err != nil || !fresh.pending() {
			return err
		}
		select { // a connection in its handshake: look again
		case <-ctx.Done():
			return fmt.Errorf("shardis: checking the clients: %w", ctx.Err())
		case <-time.After(handshakePoll):
		}
	}
}

// freshConns remembers when each unnamed connection that had sent no
// command yet (cmd=NULL in CLIENT LIST), or only AUTH or HELLO, was first
// seen. A shardis client shows so between its connect and its CLIENT
// SETNAME (a pool dialling,
// clients reconnecting to a restarted node): such a connection is judged
// only once it has stayed so for handshakeGrace, and reported then.
type freshConns map[string]time.Time

const (
	handshakeGrace = 500 * time.Millisecond
	handshakePoll  = 50 * time.Millisecond
)

// pending reports whether a connection still waits for its grace to end.
func (f freshConns) pending() bool {
	for _, first := range f {
		if time.Since(first) < handshakeGrace {
			return true
		}
	}
	return false
}

// inHandshake reports whether e is an unnamed connection that has sent
// nothing yet, or only its credentials (AUTH or HELLO: with a password a
// pool authenticates, and waits for the reply, before CLIENT SETNAME),
// for less than handshakeGrace since fresh first saw it.
func (f freshConns) inHandshake(e clientEntry) bool {
	if f == nil || e.name != "" {
		return false
	}
	switch e.cmd {
	case "NULL", "auth", "hello":
	default:
		return false
	}
	key := e.node + " " + e.id
	first, ok := f[key]
	if !ok {
		first = time.Now()
		f[key] = first
	}
	if time.Since(first) < handshakeGrace {
		return true
	}
	f[key] = first.Add(-time.Hour) // judged: no longer pending
	return false
}

// clientList reads CLIENT LIST on every old node.
func clientList(ctx context.Context, pools *pool.Set, info shard.MigrationInfo) ([]clientEntry, error) {
	return clientListOn(ctx, pools, info.From.Nodes())
}

// clientListOn reads CLIENT LIST on nodes. A node that cannot be reached
// or refuses the command fails it with a *shard.NodeError naming the
// node, whose cause says that the connections could not be listed, and,
// for a refusal (an ACL without the command, a rename-command), that the
// mover needs the command: it tells the processes and the other movers
// by their connections' names.
func clientListOn(ctx context.Context, pools *pool.Set, nodes []shard.Node) ([]clientEntry, error) {
	var entries []clientEntry
	for _, n := range nodes {
		conn, err := pools.Get(ctx, n.Addr)
		if err != nil {
			return nil, &shard.NodeError{Node: n, Err: errtext.Errorf("listing its connections (CLIENT LIST): %w", err)}
		}
		text, err := redis.String(redis.DoContext(conn, ctx, "CLIENT", "LIST"))
		conn.Close()
		if _, refused := err.(redis.Error); refused {
			return nil, &shard.NodeError{Node: n, Err: errtext.Errorf("CLIENT LIST refused: %w; the mover tells the processes and other movers by their connections' names, and needs CLIENT LIST on every node (ACL: +client|list for its user)", err)}
		}
		if err != nil {
			return nil, &shard.NodeError{Node: n, Err: errtext.Errorf("listing its connections (CLIENT LIST): %w", err)}
		}
		entries = append(entries, parseClientList(n.Addr, text)...)
	}
	return entries, nil
}

// judgeClients reports the connections of entries that block a move,
// except those in their handshake (fresh; nil: none is).
func judgeClients(entries []clientEntry, info shard.MigrationInfo, allowUnnamed bool, fresh freshConns) error {
	migrating := map[string]bool{} // instances with a beacon for this migration
	for _, e := range entries {
		if cn, ok := shard.ParseClientName(e.name); ok && cn.Migrating && beaconMatches(cn, info) {
			migrating[cn.Instance] = true
		}
	}
	var bad []ClientConn
	for _, e := range entries {
		if e.ignorable() {
			continue
		}
		cc := ClientConn{Node: e.node, ID: e.id, Addr: e.addr, Name: e.name}
		cn, ok := shard.ParseClientName(e.name)
		switch {
		case !ok:
			if allowUnnamed || fresh.inHandshake(e) {
				continue
			}
			cc.Reason = "not named by a shardis client: it may route by the old placement"
		case migrating[cn.Instance]:
			continue
		case cn.Migrating:
			cc.Reason = fmt.Sprintf("migrates %s -> %s, not %s -> %s", cn.From, cn.To, info.FromID, info.ToID)
		default:
			cc.Reason = fmt.Sprintf("routes by topology %s alone", cn.Topology)
		}
		bad = append(bad, cc)
	}
	if len(bad) > 0 {
		return &ClientsError{Conns: bad}
	}
	return nil
}

// beaconMatches reports whether a beacon names this migration. A cluster
// is named after the seeds a process was given, which differ between
// processes, so any cluster name matches a cluster.
func beaconMatches(cn shard.ClientName, info shard.MigrationInfo) bool {
	same := func(a, b string) bool {
		return a == b || strings.HasPrefix(a, "cluster-") && strings.HasPrefix(b, "cluster-")
	}
	return same(cn.From, info.FromID) && same(cn.To, info.ToID)
}

// ignorable reports the connections that route nothing: replication
// links, the mover's own, the CLIENT LIST that asks, and the connections
// that MIGRATE opens from server to server (it keeps them for 10 s; their
// last command is RESTORE or RESTORE-ASKING).
func (e clientEntry) ignorable() bool {
	switch {
	case strings.ContainsAny(e.flags, "SM"), strings.HasPrefix(e.name, moverName):
		return true
	}
	switch e.cmd {
	case "client|list", "restore", "restore-asking":
		return true
	}
	return false
}

// parseClientList reads CLIENT LIST's "field=value ..." lines.
func parseClientList(node, text string) []clientEntry {
	var out []clientEntry
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		e := clientEntry{node: node}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "id":
				e.id = v
			case "addr":
				e.addr = v
			case "name":
				e.name = v
			case "flags":
				e.flags = v
			case "cmd":
				e.cmd = v
			case "age":
				e.age = v
			}
		}
		out = append(out, e)
	}
	return out
}

// moverPool returns the pool options of the mover's own connections.
func moverPool(o pool.Options) pool.Options {
	o.ClientName = moverName
	return o
}

// moverPoolFor is moverPool for the connections of a Move, whose name
// also says which migration it runs and which run it is
// ("shardis-reshard:FROM>TO>INSTANCE", self the instance of its routing
// client), so that the arm of the opposite migration, and another Move of
// the same one, can tell that it is still running (opposite.go).
func moverPoolFor(o pool.Options, info shard.MigrationInfo, self string) pool.Options {
	o = moverPool(o)
	o.ClientName += ":" + info.FromID + ">" + info.ToID + ">" + self
	return o
}

// routingClient builds the client whose routers the mover uses: routing
// by to, migrating from from. It sends no command of its own.
func routingClient(ctx context.Context, from, to shard.Config, addrs map[string]string) (*shard.Client, error) {
	cfg := to
	f := from
	f.Migration = nil
	cfg.Migration = &shard.Migration{From: &f, Addrs: addrs, Armed: true} // the mover arms the fence itself (arm.go)
	cfg.Pool = moverPool(cfg.Pool)
	cfg.Health.Interval = -1
	cfg.Health.AutoEject = false
	// The processes' config of the new topology may read from replicas
	// once the migration ends (StartMigration allows it); the mover
	// routes by masters alone, which a migrating config must.
	if cfg.Cluster.ReadFrom != "" {
		cfg.Cluster.ReadFrom = shard.ReadMaster
	}
	if cfg.Sentinel.ReadFrom != "" {
		cfg.Sentinel.ReadFrom = shard.ReadMaster
	}
	return shard.New(ctx, cfg)
}
