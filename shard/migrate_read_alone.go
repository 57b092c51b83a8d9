package shard

import (
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Some reads need no EXISTS beside them: their own reply says whether
// their one key is at the node that answered. GET answers nil exactly
// when the key is missing (a key of another type gives WRONGTYPE), TTL
// and PTTL answer -2, TYPE answers none, and the length or contents of a
// hash, list, set or sorted set are empty only when the key is missing,
// since Redis deletes such a key with its last element. Sent alone to the
// old owner, such a read costs the server one command instead of four
// (MULTI, EXISTS, the command, EXEC), and its answer is settled as the
// transaction's would be:
//
//   - a reply that shows the key: the answer, as when EXISTS counts it;
//   - a reply that shows it missing: the key has left and will not come
//     back (migrate_read.go); it is noted as moved and the command runs at
//     the new owner, as when EXISTS counts none;
//   - WRONGTYPE: the key is there, with another type, and that is the
//     answer; NOPERM: the server refuses the command itself, which is
//     the answer at any owner (refusedRead);
//   - MOVED from an old cluster's master: the slot moved inside the old
//     cluster; the redirect is followed (migrate_cluster_moved.go);
//   - any other error, or no reply: the key moves first, as when the
//     transaction fails. The read has no effect, so it may run again.
//
// The reply is one command's, so the value read and the presence seen are
// one instant's, as EXISTS and the command in one transaction are.

// presenceShown reports whether cl is one of those reads, with exactly
// the arguments that make its reply show its key's presence.
func presenceShown(cl *call) bool {
	if cl.info == nil || len(cl.args) != 1 {
		return false
	}
	switch cl.info.Name {
	case "get", "exists", "type", "ttl", "pttl",
		"hgetall", "hlen", "smembers", "scard", "llen", "zcard":
		return true
	}
	return false
}

// absentReply reports whether reply, the reply of a presenceShown read
// named name, says that its key is missing.
func absentReply(name string, reply any) bool {
	switch name {
	case "get":
		return reply == nil
	case "exists", "hlen", "scard", "llen", "zcard":
		n, ok := reply.(int64)
		return ok && n == 0
	case "ttl", "pttl":
		n, ok := reply.(int64)
		return ok && n == -2
	case "type":
		s, ok := reply.(string)
		return ok && s == "none"
	case "hgetall", "smembers":
		vs, ok := reply.([]any)
		return ok && len(vs) == 0
	}
	return false
}

// settleAlone settles r, a read sent alone to its key's old owner: served
// there, noted as moved, or handed to the moves (mv, which it returns,
// created when needed).
func (c *Client) settleAlone(m *migState, rd *oldReads, r *oldRead, mv *moves) *moves {
	a := r.alone
	var re redis.Error
	switch {
	case a.err == nil && absentReply(r.cl.info.Name, a.reply):
		m.moved.add(r.keys[0])
		return mv
	case a.err == nil,
		errors.As(a.err, &re) && (strings.HasPrefix(string(re), "WRONGTYPE") || strings.HasPrefix(string(re), "NOPERM")):
		rd.serve(m, r, a.reply, a.err)
		return mv
	case movedAtOld(m, a.err):
		failMoved(r, a.err)
		return mv
	}
	if mv == nil {
		mv = new(moves)
	}
	mv.add(c, m, r.src, r.dst, r.keys[0], r.cl)
	return mv
}
