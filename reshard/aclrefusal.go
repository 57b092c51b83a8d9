package reshard

import (
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// ErrPermission is matched (errors.Is) by the errors of Arm and Move
// whose cause is a server's ACL refusal of a command the move needs (a
// NOPERM reply, the reply a script's refused command gives, or a new
// node's NOPERM that an old node's MIGRATE passes on): the ACL user of
// To's pool options (the mover's on every node, and the one an old
// node's MIGRATE logs in to the new node as) lacks a permission on the
// node the error names. The server's reply, which names the command or
// key, is kept (errors.As finds the redis.Error); no password is in it.
var ErrPermission = errors.New("shardis: an ACL user lacks a permission the move needs")

// aclRefusal reports whether err holds a server's ACL refusal: NOPERM,
// the error of a command a script may not run (Redis 7.0: "The user
// executing the script can't run this command"), or either passed on by
// MIGRATE ("Target instance replied with error: NOPERM ...").
func aclRefusal(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	s := string(re)
	return strings.HasPrefix(s, "NOPERM") || strings.Contains(s, "replied with error: NOPERM") ||
		strings.Contains(s, "user executing the script can't run")
}

// permissionHint is what the error of an ACL refusal adds to the
// server's reply.
const permissionHint = "; the ACL user of To's pool options (the mover's on every node, and the one an old " +
	"node's MIGRATE logs in to the new node as) lacks the permission the reply names: grant it that command " +
	"and the keys (docs/resharding.md, ACL permissions)"

// permissionError is err, an ACL refusal (aclRefusal), matching
// ErrPermission as well as err, with what to grant.
type permissionError struct{ err error }

// Error implements error.
func (e *permissionError) Error() string { return e.err.Error() + permissionHint }

// Unwrap returns ErrPermission and the refusal.
func (e *permissionError) Unwrap() []error { return []error{ErrPermission, e.err} }
