package shard

import (
	"strings"

	"github.com/shardis/shardis/shard/command"
)

// demotedUnblock is the text of the error reply a server gives every
// client blocked on it (BLPOP, BZPOPMIN, XREAD BLOCK, ...) when it turns
// from a master into a replica, a failover's demoted master, or when a
// replica is pointed at another master (a failover's reconfiguration of
// the replicas, an XREAD BLOCK served by a replica): it ends the command
// unserved and closes the connection. Other UNBLOCKED replies (a
// CLIENT UNBLOCK ... ERROR, an XREADGROUP whose stream was deleted) are
// the caller's to see.
const demotedUnblock = "UNBLOCKED force unblock from blocking operation, instance state changed"

// unblockedByDemotion reports whether msg, the error reply of a command
// that info describes, is a demoted master's unblocking of a command of
// Redis's own that blocks on keys: it popped, moved or read nothing, and
// the new master (the slot's, or the Sentinel shard's) can serve it, as
// it serves a write the demoted master refused (READONLY). WAIT and
// WAITAOF, whose answer is about their connection's own writes, and a
// module's command, which may have done anything before it blocked, are
// not sent again.
func unblockedByDemotion(info *command.Info, msg string) bool {
	if !strings.HasPrefix(strings.TrimPrefix(msg, "-"), demotedUnblock) {
		return false
	}
	return info != nil && info.Flags&command.Blocking != 0 && info.Flags&command.Module == 0 &&
		command.Lookup(info.Name) == info
}
