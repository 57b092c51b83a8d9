package shard

import (
	"context"
	"strings"
	"time"

	"github.com/shardis/shardis/shard/command"
)

// The connection-state rule. Every command is classified by
// command.EffectOf as stateless or as one that changes the connection it
// runs on. A pooled connection must only ever go back to the pool in the
// state a fresh one has, so:
//
//   - Do, DoKey and pipelines refuse the commands whose connection would
//     be of no use to the caller and of harm to the next one (subscribe
//     mode, MONITOR, CLIENT REPLY OFF|SKIP, transactions, SELECT, HELLO 3)
//     with a *ConnStateError whose hint names the right tool (stateRefusal);
//   - they run the other state-changing commands (AUTH, CLIENT SETNAME,
//     CLIENT TRACKING, READONLY, RESET, ...) on connections that are closed
//     afterwards, never batched with other callers' commands (runStateful,
//     pipeable);
//   - connections lent to code outside the executor (ForEachShard
//     callbacks, transactions, a Conn's transactions) are wrapped so that
//     every command sent on them is noted, and are restored or closed when
//     they are given back (trackedConn).

// stateRefusal returns the error with which Do, DoKey and pipelines refuse
// a command with effect eff, or nil when the command may run (on a
// connection that is closed afterwards when eff is not Stateless).
func stateRefusal(eff command.ConnEffect, name string, args []any) error {
	var hint string
	switch eff {
	case command.Subscribe:
		hint = "a subscribed connection takes only pub/sub commands and its messages would never reach you: use Client.Subscribe, PSubscribe or SSubscribe"
	case command.Exclusive:
		hint = "the connection would stop answering commands: run it on a connection of your own with ForEachNode (it is closed when the callback returns); CLIENT REPLY OFF|SKIP gets no reply there either: Send and Flush it, a Do would wait for its read timeout"
	case command.Transaction:
		hint = "a transaction spans several commands on one connection: use Client.Tx, or MULTI ... EXEC on Client.Conn()"
	case command.Database:
		hint = "every pooled connection uses the database set in Pool.DB: use a client configured for the other database"
	case command.Protocol:
		hint = "pooled connections speak RESP2: only HELLO 2 may run"
	default:
		return nil
	}
	return &ConnStateError{Command: commandLabel(name, args, eff), Effect: eff, Hint: hint}
}

// commandLabel names a command in an error: upper case, with CLIENT's
// subcommand.
func commandLabel(name string, args []any, eff command.ConnEffect) string {
	label := strings.ToUpper(name)
	if eff != command.Stateless && strings.EqualFold(name, "client") && len(args) > 0 {
		label += " " + strings.ToUpper(keyString(args[0]))
		if len(args) > 1 && strings.EqualFold(keyString(args[0]), "reply") {
			label += " " + strings.ToUpper(keyString(args[1]))
		}
	}
	return label
}

// noKeyHint says, in the error for a keyless command, which tool runs it.
func noKeyHint(info *command.Info, name string, args []any) string {
	switch command.EffectOf(info, name, args) {
	case command.Transaction:
		return "use Client.Tx, or MULTI ... EXEC on Client.Conn()"
	case command.Subscribe:
		return "use Client.Subscribe, PSubscribe or SSubscribe"
	}
	if info != nil {
		r := info.Resolve(args)
		if r == nil {
			r = info
		}
		if r.Flags&command.Admin != 0 || r.RequestPolicy == command.RequestAllShards || r.RequestPolicy == command.RequestAllNodes {
			return "run it on every node with ForEachShard (or ForEachNode)"
		}
	}
	return "name its target with DoKey, or run it on every node with ForEachShard"
}

// checkContext rejects a nil context: every call taking one returns
// ErrNilContext for it rather than panicking deep inside.
func checkContext(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	return nil
}

// txStateRefusal refuses, in Tx.Do and Tx.Queue, the commands after which
// the transaction's connection no longer answers as the transaction needs:
// subscribe mode, MONITOR, CLIENT REPLY OFF|SKIP and HELLO 3 (the replies
// that follow are not the commands'), and RESET and QUIT (they drop the
// WATCH and the MULTI: the queued commands would run one by one, or not at
// all). Other state changes (CLIENT SETNAME, SELECT of the client's
// database, ...) run, and the connection is closed when the transaction
// ends; Tx.check refuses SELECT of another database (selectRefusal).
func txStateRefusal(name string, args []any) error {
	info := command.Lookup(name)
	eff := command.EffectOf(info, name, args)
	switch eff {
	case command.Subscribe, command.Exclusive, command.Protocol:
		return stateRefusal(eff, name, args)
	case command.SetsState:
		if info.Name == "reset" || info.Name == "quit" {
			return &ConnStateError{Command: commandLabel(name, args, eff), Effect: eff,
				Hint: "it would end the transaction (WATCH and MULTI) on its connection: Tx ends it when fn returns (return an error to abandon it)"}
		}
	}
	return nil
}

// ctxEnded returns the error of a context that has ended, or whose
// deadline has passed though its timer has not fired yet: nothing is
// written under it.
func ctxEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// hasStateful reports whether a batch holds a call that changes its
// connection's state.
func hasStateful(calls []*call) bool {
	for _, cl := range calls {
		if cl.stateful {
			return true
		}
	}
	return false
}

// runStateful runs a batch that holds state-changing calls. It works as
// runWatched does, but the connection of every node that ran such a call
// is closed afterwards instead of going back to the pool.
func (c *Client) runStateful(ctx context.Context, calls []*call) (abandoned bool) {
	c.runWatched(ctx, calls, true)
	return false
}

// txOwnCommand refuses, in Tx.Do and Tx.Queue, the commands that Tx sends
// itself.
func txOwnCommand(name string) error {
	if strings.EqualFold(name, "multi") || strings.EqualFold(name, "exec") || strings.EqualFold(name, "discard") {
		return &ConnStateError{Command: strings.ToUpper(name), Effect: command.Transaction,
			Hint: "Tx sends MULTI and EXEC itself: queue the transaction's commands with tx.Queue"}
	}
	return nil
}
