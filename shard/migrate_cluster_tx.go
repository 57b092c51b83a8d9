package shard

import (
	"context"
	"errors"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
)

// A key's move out of a cluster (the old topology is one) runs as
//
//	MULTI; MIGRATE ... KEYS k...; EXEC
//
// at the master of the keys' slot. Redis runs MIGRATE at that master even
// while the slot is half moved inside the cluster, and answers NOKEY for
// a key that has already gone to the importing master: taken for "the
// key has left", the key would be remembered as moved, a read would miss
// it and a read-modify-write start a fresh value at the new owner. EXEC,
// unlike MIGRATE, is checked against the slot's state: a key missing from
// a migrating slot gets ASK (TRYAGAIN when some of the keys are there),
// and nothing runs. The ASK is followed: ASKING and the MIGRATE at the
// importing master, which runs it locally too and moves the key from
// where it is. TRYAGAIN, or a second redirect, fails the move with that
// error (a *MigrateError for the caller's command): the key stays where
// it is, nothing is lost, and the command may be tried again.

// sendMigrates sends the MIGRATE calls migs of migration m, each in a
// transaction when m moves out of a cluster.
func (c *Client) sendMigrates(ctx context.Context, m *migState, migs []*call) {
	if _, ok := m.from.(*ClusterRouter); !ok {
		c.runSide(ctx, migs, c.runPooled)
		return
	}
	wire := txMigrates(migs)
	c.runSide(ctx, wire, c.runPooled)
	c.settleTxMigrates(ctx, wire)
}

// txMigrates returns the commands that send the MIGRATE calls migs (one
// per slot) each in its own transaction; a call that already failed (its
// arguments) is left out.
func txMigrates(migs []*call) []*call {
	out := make([]*call, 0, 3*len(migs))
	for _, mig := range migs {
		if mig.err != nil {
			continue
		}
		out = append(out,
			&call{name: "MULTI", node: mig.node, cut: mig.cut},
			mig,
			&call{name: "EXEC", node: mig.node, cut: mig.cut})
	}
	return out
}

// settleTxMigrates gives each MIGRATE of wire (txMigrates' commands, sent)
// the outcome of its transaction, and sends the MIGRATEs an ASK sent to
// their importing masters.
func (c *Client) settleTxMigrates(ctx context.Context, wire []*call) {
	var asks []*call
	var asked []*call
	for i := 0; i+2 < len(wire); i += 3 {
		mig, exec := wire[i+1], wire[i+2]
		if mig.err != nil {
			continue // refused when queued (MOVED, a connection error, ...): its own error
		}
		mig.reply, mig.err = txOutcome(exec)
		var re redis.Error
		if !errors.As(mig.err, &re) {
			continue
		}
		from := c.nodes.get(mig.node).node
		rd, ok := cluster.ParseRedirect(string(re), from.Addr)
		if !ok || rd.Kind != cluster.Ask {
			continue
		}
		idx := c.nodes.add(Node{Name: rd.Addr, Addr: rd.Addr})
		asks = append(asks, &call{name: mig.name, args: mig.args, node: idx, asking: true, cut: mig.cut})
		asked = append(asked, mig)
	}
	if len(asks) == 0 {
		return
	}
	c.runSide(ctx, asks, c.runPooled)
	for i, a := range asks {
		asked[i].reply, asked[i].err = a.reply, a.err
	}
}

// txOutcome returns the reply and error of the one command of the
// transaction whose EXEC is exec.
func txOutcome(exec *call) (any, error) {
	if exec.err != nil {
		return nil, exec.err
	}
	vs, ok := exec.reply.([]any)
	if !ok || len(vs) != 1 {
		return nil, errUnexpectedExec
	}
	if e, isErr := vs[0].(redis.Error); isErr {
		return nil, e
	}
	return vs[0], nil
}

// errUnexpectedExec is the error of a move whose EXEC did not answer with
// its one command's reply (a transaction discarded by the server).
var errUnexpectedExec = errors.New("shardis: the MIGRATE's transaction did not run")
