package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// The generated command table (package command) is frozen at one Redis
// version. Commands it does not know (newer Redis or Valkey commands,
// module commands, commands renamed with rename-command) are learned from
// the servers at run time: COMMAND INFO gives their flags and key specs,
// and COMMAND GETKEYS on the first call checks that the key positions the
// specs give are the ones the server finds. A command that passes is
// cached for the life of the client and routed like a table command from
// then on; the table stays the fast path, consulted first. A module
// command whose keys the module's code may find (getkeys-api) is not
// learned (keysByModule): its specs are a guess that one call's check
// cannot confirm for the next.

// unlearnedRetry is how long a command that could not be learned stays
// unknown before a call asks the servers again. It is short: a module
// loaded, or a node restarted with another rename-command, makes a command
// valid at any moment, and the client, which does not send commands it
// does not know, sees no reply that would say so. One call per interval
// asks (unknownErr); the others meanwhile get the cached refusal, so a
// busy caller of a command that stays unknown costs the servers one
// COMMAND INFO a second.
const unlearnedRetry = time.Second

// learnedCommands caches what the servers said about commands the table
// does not know. The zero value is empty and ready.
type learnedCommands struct {
	mu sync.RWMutex
	m  map[string]learnedCommand
}

type learnedCommand struct {
	info *command.Info // nil: not learned (see err)
	err  error
	at   time.Time
}

// lookup returns a learned command, or nil.
func (l *learnedCommands) lookup(name string) *command.Info {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if len(l.m) == 0 {
		return nil
	}
	return l.m[strings.ToLower(name)].info
}

// unknownErr returns why name is not known, or nil when it may be tried.
// Once unlearnedRetry has passed since a refusal, one caller gets nil and
// asks the servers again; the refusal's time is moved to now for it, so
// callers arriving meanwhile keep the refusal instead of all asking.
func (l *learnedCommands) unknownErr(name string) error {
	l.mu.RLock()
	e, ok := l.m[name]
	l.mu.RUnlock()
	if !ok || e.info != nil {
		return nil
	}
	if time.Since(e.at) < unlearnedRetry {
		return e.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok = l.m[name]
	if !ok || e.info != nil {
		return nil
	}
	if time.Since(e.at) < unlearnedRetry {
		return e.err // another caller is asking
	}
	e.at = time.Now()
	l.m[name] = e
	return nil
}

// store records what was learned of name. A failure never replaces a
// command learned already: callers learning the same command at once
// race, and the one that failed must not make the command unknown for
// everybody after another learned it.
func (l *learnedCommands) store(name string, e learnedCommand) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = make(map[string]learnedCommand)
	}
	if e.info == nil && l.m[name].info != nil {
		return
	}
	l.m[name] = e
}

// callRefusedError is a failure to learn a command that holds for one
// call's arguments only (a subcommand that does not exist, arguments
// COMMAND GETKEYS refuses): the call fails with it, but it says nothing
// of the command's other calls, so it is not cached under the command's
// name. It wraps the error the call gets, which wraps ErrUnknownCommand.
type callRefusedError struct{ err error }

func (e *callRefusedError) Error() string { return e.err.Error() }
func (e *callRefusedError) Unwrap() error { return e.err }

// refusedForCall reports whether err, from learning a command, holds for
// the call's arguments only (callRefusedError).
func refusedForCall(err error) bool {
	var re *callRefusedError
	return errors.As(err, &re)
}

// learnUnknown learns the commands of a planned batch that failed with
// ErrUnknownCommand, and reports whether it learned any, in which case the
// caller plans the batch again. The caller must not hold the batch's
// plan counted by a migration's fence meanwhile: the servers may be slow
// to answer, and the fence's switch would wait for them. call(i) returns request i's command name
// and arguments, and false when the request named its own route (DoKey).
//
// A command that could not be learned is asked about once per batch: its
// other requests get the same error. A failure to reach the servers is not
// cached for later calls (commandInfo), so without this a pipeline of many
// such commands would wait for a hung server once per command.
func (c *Client) learnUnknown(ctx context.Context, b *batch, call func(i int) (string, []any, bool)) bool {
	learned := false
	var failed map[string]error // lower-case name -> why it stays unknown
	for i := range b.reqs {
		if b.reqs[i].err == nil || !errors.Is(b.reqs[i].err, ErrUnknownCommand) {
			continue
		}
		name, args, ok := call(i)
		if !ok {
			continue
		}
		lower := strings.ToLower(name)
		if err, ok := failed[lower]; ok {
			b.reqs[i].err = err
			continue
		}
		if _, err := c.commandInfo(ctx, name, args); err != nil {
			b.reqs[i].err = err
			var ne *NodeError
			if errors.As(err, &ne) || ctx.Err() != nil {
				// The servers could not be asked; a refusal instead
				// (the server's own verdict on these arguments) is
				// cached by commandInfo or checked per call.
				if failed == nil {
					failed = make(map[string]error)
				}
				failed[lower] = err
			}
			continue
		}
		learned = true
	}
	return learned
}

// hasUnknown reports whether a request of b failed with ErrUnknownCommand.
func hasUnknown(b *batch) bool {
	for i := range b.reqs {
		if b.reqs[i].err != nil && errors.Is(b.reqs[i].err, ErrUnknownCommand) {
			return true
		}
	}
	return false
}

// unknownErrs returns the errors of b's requests that stay unknown after
// learnUnknown (nil for the others), for keepUnknownErrs once b has been
// planned again.
func unknownErrs(b *batch) []error {
	var errs []error
	for i := range b.reqs {
		if err := b.reqs[i].err; err != nil && errors.Is(err, ErrUnknownCommand) {
			if errs == nil {
				errs = make([]error, len(b.reqs))
			}
			errs[i] = err
		}
	}
	return errs
}

// keepUnknownErrs gives the requests of b, planned again, that are still
// unknown the errors learnUnknown gave them (unknownErrs), which say why.
func keepUnknownErrs(b *batch, errs []error) {
	if len(errs) != len(b.reqs) {
		return
	}
	for i := range b.reqs {
		if errs[i] != nil && b.reqs[i].err != nil && errors.Is(b.reqs[i].err, ErrUnknownCommand) {
			b.reqs[i].err = errs[i]
		}
	}
}

// learnsRouted reports whether executing a plan learns, counted by the
// fence, the commands the client does not know that are routed by the
// caller's key (DoKey, SendKey): a migration's execution learns their
// keys to move them first (learnRouted in migrate_exec.go). Planned by
// the new topology of a migration that a rollback may turn around
// (active), or by the old one of a rollback not fenced yet, the
// execution holds the count that a switch waits for: the caller learns
// them before (learnRoutedAhead) instead.
func (fp fencePlan) learnsRouted() bool {
	return fp.active || (fp.counted && fp.m.prev != nil)
}

// unknownRouted reports whether b holds a call, routed by the caller's
// key, of a command the client does not know (a command routed by its
// own keys fails planning instead).
func unknownRouted(b *batch) bool {
	for i := range b.reqs {
		if r := &b.reqs[i]; r.err == nil && r.call != nil && r.call.info == nil {
			return true
		}
	}
	return false
}

// learnRoutedAhead learns the commands of unknownRouted's calls, and
// returns why the ones that stay unknown do (by request index; nil when
// all were learned). The caller holds no plan of b meanwhile, and plans
// the same requests in the same order again. A command is asked about
// once per batch, unless the failure held for one call's arguments only
// (refusedForCall): its other calls are asked about with theirs.
func (c *Client) learnRoutedAhead(ctx context.Context, b *batch) []error {
	var failed []error
	var byName map[string]error // lower-case name -> why it stays unknown
	for i := range b.reqs {
		r := &b.reqs[i]
		if r.err != nil || r.call == nil || r.call.info != nil {
			continue
		}
		lower := strings.ToLower(r.call.name)
		err, ok := byName[lower]
		if !ok {
			if _, err = c.commandInfo(ctx, r.call.name, r.call.args); err != nil && !refusedForCall(err) {
				if byName == nil {
					byName = make(map[string]error)
				}
				byName[lower] = err
			}
		}
		if err != nil {
			if failed == nil {
				failed = make([]error, len(b.reqs))
			}
			failed[i] = err
		}
	}
	return failed
}

// failRouted refuses the calls of b, planned again after
// learnRoutedAhead, whose commands could not be learned (failed), as the
// execution would (learnRouted): nothing is sent, and the execution does
// not ask the servers again inside the fence's count.
func failRouted(b *batch, failed []error) {
	if len(failed) != len(b.reqs) {
		return
	}
	for i := range b.reqs {
		r := &b.reqs[i]
		if r.err != nil || r.call == nil || r.call.info != nil {
			continue
		}
		if err := failed[i]; err != nil {
			r.call.err = errtext.Errorf("%w: %s, routed by the caller's key, cannot have its keys moved first: %w", ErrMigration, r.call.name, err)
			r.call.done = true
		}
	}
}

// learnOne is learnUnknown for a batch of one command. args must not be
// the caller's variadic slice (which would then escape to the heap): Do
// passes the batch's own copy.
func (c *Client) learnOne(ctx context.Context, b *batch, name string, args []any) bool {
	return c.learnUnknown(ctx, b, func(int) (string, []any, bool) { return name, args, true })
}

// learnCommand asks a node about name with COMMAND INFO and checks the key
// positions of one call (args) against COMMAND GETKEYS. Errors are
// *NodeError when the node could not be reached, else they wrap
// ErrUnknownCommand and say why the command stays unknown, in a
// *callRefusedError when only these arguments are refused.
func (c *Client) learnCommand(ctx context.Context, name string, args []any) (*command.Info, error) {
	nodes := c.Nodes()
	if len(nodes) == 0 {
		return nil, ErrNoNodes
	}
	// Any node can describe a command; the first that answers does.
	var err error
	for _, node := range nodes {
		var info *command.Info
		info, err = c.learnFrom(ctx, node, name, args)
		var ne *NodeError
		if !errors.As(err, &ne) || ctx.Err() != nil {
			return info, err
		}
	}
	return nil, err
}

// learnFrom is learnCommand on one node.
func (c *Client) learnFrom(ctx context.Context, node Node, name string, args []any) (*command.Info, error) {
	conn, err := c.pools.Get(ctx, node.Addr)
	if err != nil {
		return nil, &NodeError{Node: node, Err: err}
	}
	defer conn.Close()
	reply, err := redis.Values(redis.DoContext(conn, ctx, "COMMAND", "INFO", name))
	if err != nil {
		if _, ok := err.(redis.Error); ok {
			return nil, errtext.Errorf("%w %q: COMMAND INFO: %w", ErrUnknownCommand, name, err)
		}
		return nil, &NodeError{Node: node, Err: err}
	}
	if len(reply) != 1 || reply[0] == nil {
		return nil, fmt.Errorf("%w %q: the server does not know it either", ErrUnknownCommand, name)
	}
	info, err := command.FromCommandInfo(reply[0])
	if err != nil {
		return nil, errtext.Errorf("%w %q: %w", ErrUnknownCommand, name, err) // a reply the client cannot read: no *NodeError
	}
	if keysByModule(info) {
		return nil, fmt.Errorf("%w %q: a module command whose keys the module's own code may find (movablekeys), which its key specs are not known to describe: send it with DoKey, naming its key", ErrUnknownCommand, name)
	}
	if err := checkKeys(ctx, conn, node, info, name, args); err != nil {
		return nil, err
	}
	return info, nil
}

// keysByModule reports whether info, or one of its subcommands, is a
// module command whose keys the server may find with the module's own
// code (getkeys-api): one flagged "module" and "movablekeys" with key
// specs that
//   - each give a range from an index: specs that do not make the keys
//     movable, so the flag comes from getkeys-api, and they are the
//     legacy key triple the command was registered with; or
//   - include one flagged variable_flags, or one the client cannot
//     evaluate for every call (specsEvaluable): the server then prefers
//     the module's code to the specs (a module command may be given a
//     keyword spec as well as getkeys-api, and COMMAND INFO does not say
//     whether it was).
//
// The server finds such a command's keys by calling the module for every
// call: COMMAND GETKEYS may agree with the specs for one call's arguments
// and not for another's, so a check of the first call cannot vouch for
// them: the command is not learned, and DoKey sends it by the key the
// caller names. Specs the server evaluates itself (reliable flags, known
// search methods) are where it finds the keys of every call, getkeys-api
// or not.
func keysByModule(info *command.Info) bool {
	for _, sub := range info.Subcommands {
		if keysByModule(sub) {
			return true
		}
	}
	if info.Flags&command.Module == 0 || info.Flags&command.MovableKeys == 0 {
		return false
	}
	specs, ranges := 0, 0
	for _, ks := range info.KeySpecs {
		if ks.Flags&command.KeyNotKey != 0 {
			continue
		}
		specs++
		if ks.Flags&command.KeyVariableFlags != 0 {
			return true
		}
		if ks.Begin.Kind == command.BeginIndex && ks.Find.Kind == command.FindRange {
			ranges++
		}
	}
	// Without specs the command is keyless to the client, which routes
	// it by no key of its own (Do fails with ErrNoKey).
	return specs > 0 && (ranges == specs || !specsEvaluable(info))
}

// checkKeys compares the keys info finds in args with COMMAND GETKEYS.
func checkKeys(ctx context.Context, conn redis.Conn, node Node, info *command.Info, name string, args []any) error {
	resolved := info.Resolve(args)
	if resolved == nil {
		return &callRefusedError{fmt.Errorf("%w %q: no such subcommand", ErrUnknownCommand, name)}
	}
	pos, posErr := resolved.KeyPositions(args, nil)
	if !resolved.HasKeys() && posErr == nil && len(pos) == 0 {
		return nil // a keyless command: nothing to check, routed like other keyless commands
	}
	reply, err := redis.DoContext(conn, ctx, "COMMAND", append([]any{"GETKEYS", name}, args...)...)
	var server []string
	if err == nil {
		server, err = redis.Strings(reply, nil)
	}
	if err != nil {
		if _, ok := err.(redis.Error); !ok {
			return &NodeError{Node: node, Err: err}
		}
		if posErr != nil {
			return nil // both refuse these arguments; the server will say why
		}
		// The server refuses these arguments, which says nothing of
		// the command's other calls.
		return &callRefusedError{errtext.Errorf("%w %q: its key specs find keys at %v, COMMAND GETKEYS says: %w", ErrUnknownCommand, name, pos, err)}
	}
	if posErr != nil && specsEvaluable(resolved) {
		// Specs the client evaluates fully refuse these arguments (a key
		// count that is not a number, negative, past the arguments),
		// where COMMAND GETKEYS answers with no keys for a command that
		// may have none (EVAL, FCALL): a verdict on this call, not on
		// the specs. The command is learned, and this call fails
		// planning as a table command's would.
		return nil
	}
	mine := make([]string, 0, len(pos))
	for _, p := range pos {
		if s, ok := command.Arg(args[p]); ok {
			mine = append(mine, s)
		}
	}
	if posErr != nil || !slices.Equal(mine, server) {
		return errtext.Errorf("%w %q: its key specs find keys %q (%v), COMMAND GETKEYS finds %q", ErrUnknownCommand, name, mine, posErr, server)
	}
	return nil
}

// commandInfo returns what the client knows of a command: the generated
// table's entry, or one learned from the servers, learning it now when
// it has not been asked yet (Tx and Conn transactions, which check their
// keys before anything is sent, use it).
func (c *Client) commandInfo(ctx context.Context, name string, args []any) (*command.Info, error) {
	if info := lookupCommand(name); info != nil {
		return info, nil
	}
	if info := c.learned.lookup(name); info != nil {
		return info, nil
	}
	lower := strings.ToLower(name)
	if err := c.learned.unknownErr(lower); err != nil {
		return nil, err
	}
	info, err := c.learnCommand(ctx, lower, args)
	if err != nil {
		var ne *NodeError
		if errors.As(err, &ne) || ctx.Err() != nil {
			return nil, errtext.Errorf("%w %q: the table does not know it and the server could not be asked: %w", ErrUnknownCommand, name, err)
		}
		if !refusedForCall(err) {
			c.learned.store(lower, learnedCommand{err: err, at: time.Now()})
		}
		return nil, err
	}
	c.learned.store(lower, learnedCommand{info: info, at: time.Now()})
	return info, nil
}

// specsEvaluable reports whether every key spec of info (a command or
// subcommand) is one KeyPositions evaluates for any arguments: a known
// begin search and find method, a positive step, not incomplete. An
// error from KeyPositions then concerns the call's arguments only.
func specsEvaluable(info *command.Info) bool {
	for _, ks := range info.KeySpecs {
		if ks.Flags&command.KeyNotKey != 0 {
			continue
		}
		if ks.Begin.Kind != command.BeginIndex && ks.Begin.Kind != command.BeginKeyword {
			return false
		}
		if (ks.Find.Kind != command.FindRange && ks.Find.Kind != command.FindKeyNum) || ks.Find.KeyStep < 1 {
			return false
		}
		if ks.Flags&command.KeyIncomplete != 0 {
			return false
		}
	}
	return true
}
