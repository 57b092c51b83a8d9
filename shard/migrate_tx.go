package shard

import "context"

// moveCommandKeys brings the keys of one command of a transaction to node,
// its owner under the current topology, before the command runs on the
// transaction's connection there. Client.Tx moves the keys it watches
// before WATCH; the other keys its commands (and a Conn's) touch would
// otherwise be read or written at the new owner while their value still
// sits at the old one. Nothing happens outside a migration.
func (c *Client) moveCommandKeys(ctx context.Context, node int, name string, args []any) error {
	if c == nil || c.mig.Load() == nil {
		return nil
	}
	keys, err := c.commandKeys(ctx, name, args)
	if err != nil || len(keys) == 0 {
		return nil // checked by the caller; a malformed command goes to the server
	}
	return c.moveKeys(ctx, node, keys)
}

// moveKeys is moveCommandKeys for a command of a Conn's transaction.
func (f *flusher) moveKeys(cmd connCmd) error {
	return f.rc.c.moveCommandKeys(f.ctx, f.rc.tx.node, cmd.name, cmd.args)
}
