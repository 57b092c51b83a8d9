package shard

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// locator maps one key argument to the node that serves it and to its
// group: the unit that a multi-key command must stay within (a node in ring
// mode, a hash slot in cluster mode).
type locator interface {
	locate(key any) (node, group int, err error)
	groupLabel(group int) string
}

// splitKind says how a multi-key command is split and merged back.
type splitKind uint8

const (
	noSplit  splitKind = iota
	splitGet           // MGET: one reply per key, merged in key order
	splitSet           // MSET: key value pairs, every part must say OK
	splitSum           // DEL, UNLINK, EXISTS, TOUCH: integer replies summed
)

func splitKindOf(name string) splitKind {
	switch len(name) {
	case 3:
		if strings.EqualFold(name, "del") {
			return splitSum
		}
	case 4:
		switch {
		case strings.EqualFold(name, "mget"):
			return splitGet
		case strings.EqualFold(name, "mset"):
			return splitSet
		}
	case 5:
		if strings.EqualFold(name, "touch") {
			return splitSum
		}
	case 6:
		switch {
		case strings.EqualFold(name, "unlink"), strings.EqualFold(name, "exists"):
			return splitSum
		}
	}
	return noSplit
}

// request is one user command: either one call, or the parts of a split
// multi-key command.
type request struct {
	call  *call
	whole *call // a split command's own call: its name and arguments
	parts []part
	kind  splitKind
	nkeys int
	err   error // set when the command was refused before sending
}

// part is one node's (or slot's) share of a split command; keys holds the
// ordinal of each of its keys in the user's command.
type part struct {
	call  *call
	group int
	first int   // the ordinal of its first key
	n     int   // how many keys it has
	keys  []int // every key's ordinal, when it has more than one
}

// batch is the set of calls that one Do or one pipeline sends.
type batch struct {
	reqs  []request
	calls []*call
	slab  []call // preallocated calls, handed out by newCall

	keyBuf [16]int // key positions of the command being planned
	keyPos []int   // the same, grown past keyBuf by a many-key command
	args   []any   // a single command's arguments, copied (see keep)

	// The parts of split multi-key commands (one per slot in cluster
	// mode: a 1,000-key MGET can have 1,000), kept for the next use.
	partCalls []call
	parts     []part

	// The arguments and key ordinals of the parts of more than one key,
	// cut to size from these, and each key's part while a command is
	// split.
	splitArgs []any
	splitKeys []int
	keyPart   []int32

	// The last command looked up: pipelines mostly repeat one command.
	lastName string
	lastInfo *command.Info
}

// newCall returns a zeroed call, from the slab while it lasts.
func (b *batch) newCall() *call {
	if n := len(b.slab); n < cap(b.slab) {
		b.slab = b.slab[:n+1]
		b.slab[n] = call{}
		return &b.slab[n]
	}
	return &call{}
}

// reset empties b for another use, keeping its buffers.
func (b *batch) reset(n int) {
	if cap(b.reqs) < n {
		b.reqs = make([]request, 0, n)
		b.calls = make([]*call, 0, n)
		b.slab = make([]call, 0, n)
	}
	b.reqs, b.calls, b.slab = b.reqs[:0], b.calls[:0], b.slab[:0]
	clear(b.args)
	b.args = b.args[:0]
	clear(b.partCalls)
	b.partCalls = b.partCalls[:0]
	clear(b.parts)
	b.parts = b.parts[:0]
	clear(b.splitArgs)
	b.splitArgs = b.splitArgs[:0]
	b.splitKeys = b.splitKeys[:0]
}

// release drops everything the batch refers to (replies, arguments) so
// that the garbage collector can have it, keeping the buffers themselves.
func (b *batch) release() {
	clear(b.slab)
	clear(b.reqs)
	clear(b.args)
	clear(b.partCalls)
	clear(b.parts)
	clear(b.splitArgs)
	if cap(b.partCalls) > maxKeptParts {
		b.partCalls, b.parts = nil, nil
	}
	if cap(b.splitArgs) > maxKeptParts {
		b.splitArgs, b.splitKeys, b.keyPart = nil, nil, nil
	}
}

// maxKeptParts bounds the split parts a batch keeps for its next use.
const maxKeptParts = 1 << 16

// reserve returns room for n more elements after buf's end, growing buf
// when it has less. A grown buf starts a fresh array, so that elements
// handed out earlier stay where they are.
func reserve[T any](buf *[]T, n int) []T {
	if cap(*buf)-len(*buf) < n {
		*buf = make([]T, 0, max(n, 2*cap(*buf)))
	}
	l := len(*buf)
	return (*buf)[l : l : l+n]
}

// commit extends buf over the first elements of room (from reserve) that
// were used: len(used), or all of room when used outgrew it.
func commit[T any](buf *[]T, room, used []T) {
	*buf = (*buf)[:len(*buf)+min(len(used), cap(room))]
}

// keep copies a command's arguments into the batch, so that the caller's
// variadic argument slice does not have to be allocated on the heap.
func (b *batch) keep(args []any) []any {
	start := len(b.args)
	b.args = append(b.args, args...)
	return b.args[start:len(b.args):len(b.args)]
}

// lookup finds a command's table entry, remembering the last one.
func (b *batch) lookup(name string) *command.Info {
	if name == b.lastName && b.lastInfo != nil {
		return b.lastInfo
	}
	info := command.Lookup(name)
	b.lastName, b.lastInfo = name, info
	return info
}

// add plans one user command. routeKey, when non-nil, names the key to
// route by instead of the command's own keys (DoKey).
func (c *Client) add(b *batch, loc locator, name string, args []any, routeKey any) {
	b.reqs = append(b.reqs, request{})
	req := &b.reqs[len(b.reqs)-1]
	info := b.lookup(name)
	if info == nil {
		info = c.learned.lookup(name) // commands learned from the servers (learn.go)
	}
	cl := b.newCall()
	cl.name, cl.args, cl.info, cl.node = name, args, info, -1
	// A command that may close connections (CLIENT KILL, ACL DELUSER)
	// changes no state of its own connection: it has no keys, so it runs
	// on a pooled connection of its own, which the pool retires after it.
	if eff := command.EffectOf(info, name, args); eff != command.Stateless && eff != command.Disconnects {
		if req.err = stateRefusal(eff, name, args); req.err != nil {
			return
		}
		cl.stateful = true
	}
	if routeKey != nil {
		node, group, err := loc.locate(routeKey)
		if err != nil {
			req.err = err
			return
		}
		c.place(cl, node, group)
		cl.routeLoc = loc
		req.call = cl
		b.calls = append(b.calls, cl)
		return
	}
	if info == nil {
		req.err = fmt.Errorf("%w %q: name its target with DoKey or ForEachShard", ErrUnknownCommand, name)
		return
	}
	if b.keyPos == nil {
		b.keyPos = b.keyBuf[:0]
	}
	pos, err := info.KeyPositions(args, b.keyPos[:0])
	b.keyPos = pos[:0]
	if err != nil {
		req.err = errtext.Errorf("%w: %w", ErrBadCommand, err)
		return
	}
	if len(pos) == 0 {
		pos = publishChannel(info, args, pos)
	}
	if len(pos) == 0 {
		req.err = fmt.Errorf("%w: %s: %s", ErrNoKey, strings.ToUpper(name), noKeyHint(info, name, args))
		return
	}
	node, group, err := loc.locate(args[pos[0]])
	if err != nil {
		req.err = err
		return
	}
	same := true
	for _, p := range pos[1:] {
		n, g, err := loc.locate(args[p])
		if err != nil {
			req.err = err
			return
		}
		if g != group || n != node {
			same = false
			break
		}
	}
	if same {
		c.place(cl, node, group)
		req.call = cl
		b.calls = append(b.calls, cl)
		return
	}
	kind := splitKindOf(name)
	if kind == noSplit {
		req.err = crossShardError(loc, name, args, pos)
		return
	}
	req.whole = cl
	c.split(b, req, loc, cl, kind)
}

// place sets a routed call's target: the key's node, or in cluster mode
// with replica reads a replica for a read-only command.
func (c *Client) place(cl *call, node, group int) {
	cl.node, cl.group = node, group
	if c.readReplicas.Load() && cl.info != nil && cl.info.IsReadOnly() {
		if r := c.cl(); r != nil {
			cl.replica = true
			if !r.migrating.has(group) {
				cl.node = c.pickReader(r.state.Load(), group, node)
			}
		}
	}
	if c.sent != nil && c.sent.readers && cl.info != nil && cl.info.IsReadOnly() {
		c.placeSentinelRead(cl, node)
	}
}

// split divides a multi-key command into one call per group.
func (c *Client) split(b *batch, req *request, loc locator, cl *call, kind splitKind) {
	stride := 1
	if kind == splitSet {
		stride = 2
		if len(cl.args)%2 != 0 {
			req.err = fmt.Errorf("%w: %s needs key value pairs", ErrBadCommand, strings.ToUpper(cl.name))
			return
		}
	}
	req.kind = kind
	req.nkeys = len(cl.args) / stride
	// The parts' calls come from the batch's reusable buffer: in cluster
	// mode a command over n keys can have n parts (one per slot).
	room := min(req.nkeys, 1024)
	slab := reserve(&b.partCalls, room)
	partRoom := reserve(&b.parts, room)
	req.parts = partRoom
	defer func() {
		commit(&b.partCalls, slab, slab)
		commit(&b.parts, partRoom, req.parts)
	}()
	var index *groupIndex // group -> part, once there are many groups
	defer func() {
		if index != nil {
			groupIndexes.Put(index)
		}
	}()
	// First pass: every key's part, and how many keys each part has, so
	// that a part's arguments and key ordinals are cut to size from the
	// batch's buffers instead of growing key by key.
	b.keyPart = b.keyPart[:0]
	for k := 0; k < req.nkeys; k++ {
		a := k * stride
		node, group, err := loc.locate(cl.args[a])
		if err != nil {
			req.err = err
			return
		}
		pi := -1
		if index != nil && group < len(index.part) {
			pi = index.find(group)
		} else {
			for i := range req.parts {
				if req.parts[i].group == group {
					pi = i
					break
				}
			}
		}
		if pi >= 0 {
			req.parts[pi].n++
			b.keyPart = append(b.keyPart, int32(pi))
			continue
		}
		var pc *call
		if len(slab) < cap(slab) {
			slab = slab[:len(slab)+1]
			pc = &slab[len(slab)-1]
		} else {
			pc = &call{}
		}
		// A part of one key shares the user's argument array (capped).
		pc.name, pc.info, pc.args, pc.whole = cl.name, cl.info, cl.args[a:a+stride:a+stride], cl
		c.place(pc, node, group)
		req.parts = append(req.parts, part{call: pc, group: group, first: k, n: 1})
		b.keyPart = append(b.keyPart, int32(len(req.parts)-1))
		if index != nil {
			index.set(group, len(req.parts)-1)
		} else if len(req.parts) > 16 {
			index = groupIndexes.Get().(*groupIndex)
			index.reset()
			for i := range req.parts {
				index.set(req.parts[i].group, i)
			}
		}
	}
	// Second pass: the parts of several keys get their arguments and key
	// ordinals, in key order.
	multi := 0 // keys in parts of more than one key
	for i := range req.parts {
		if n := req.parts[i].n; n > 1 {
			multi += n
		}
	}
	if multi > 0 {
		argRoom := reserve(&b.splitArgs, multi*stride)
		keyRoom := reserve(&b.splitKeys, multi)
		argUsed, keyUsed := 0, 0
		for i := range req.parts {
			p := &req.parts[i]
			if p.n < 2 {
				continue
			}
			p.call.args = argRoom[argUsed : argUsed : argUsed+p.n*stride]
			p.keys = keyRoom[keyUsed : keyUsed : keyUsed+p.n]
			argUsed += p.n * stride
			keyUsed += p.n
		}
		for k, pi := range b.keyPart {
			p := &req.parts[pi]
			if p.n < 2 {
				continue
			}
			a := k * stride
			p.call.args = append(p.call.args, cl.args[a:a+stride]...)
			p.keys = append(p.keys, k)
		}
		commit(&b.splitArgs, argRoom, argRoom[:argUsed])
		commit(&b.splitKeys, keyRoom, keyRoom[:keyUsed])
	}
	for i := range req.parts {
		p := &req.parts[i]
		if kind == splitGet && p.keys == nil && !c.noGetParts.Load() {
			// One key: GET is cheaper than a one-key MGET for the server
			// and for the reply parser (unless a server refused GET:
			// getPartRefused).
			p.call.name, p.call.info = "GET", getInfo
		}
		b.calls = append(b.calls, p.call)
	}
}

// groupIndex finds the part of a group (a slot, or a ring node) without a
// map: an entry counts only when stamped with the current generation, so
// that reusing the index costs no clearing.
type groupIndex struct {
	part [cluster.SlotCount]int32
	gen  [cluster.SlotCount]uint32
	cur  uint32
}

var groupIndexes = sync.Pool{New: func() any { return new(groupIndex) }}

// reset forgets every entry.
func (x *groupIndex) reset() {
	x.cur++
	if x.cur == 0 { // the stamps wrapped: clear them once
		clear(x.gen[:])
		x.cur = 1
	}
}

// find returns the part of group g, or -1.
func (x *groupIndex) find(g int) int {
	if x.gen[g] != x.cur {
		return -1
	}
	return int(x.part[g])
}

// set records that group g is part p; groups beyond the index are not
// recorded (find is not asked about them).
func (x *groupIndex) set(g, p int) {
	if g < len(x.part) {
		x.gen[g], x.part[g] = x.cur, int32(p)
	}
}

// getPartRefused reports whether a server refused a one-key part of the
// split MGET req, sent as GET, for good because of the command (an ACL
// user that may run MGET and not GET: "NOPERM ... the 'get' command";
// GET renamed away: "ERR unknown command 'GET'"). The caller never sent
// GET, and its MGET would fail for that: the client then stops sending
// such parts as GET (noGetParts), and the caller sends req again.
func (c *Client) getPartRefused(req *request) bool {
	if req.kind != splitGet || req.err != nil {
		return false
	}
	for _, p := range req.parts {
		if p.call.err == nil || p.keys != nil || p.call.info != getInfo {
			continue
		}
		var re redis.Error
		if errors.As(p.call.err, &re) && refusedForGood(re) && strings.Contains(strings.ToLower(string(re)), "'get'") {
			c.noGetParts.Store(true)
			return true
		}
	}
	return false
}

// getInfo is GET's command table entry.
var getInfo = command.Lookup("GET")

// result merges a request's calls back into the user's reply.
func (req *request) result() (any, error) {
	if req.err != nil {
		return nil, req.err
	}
	if req.kind == noSplit {
		return req.call.reply, req.call.err
	}
	for _, p := range req.parts {
		if p.call.err != nil {
			if req.kind == splitGet && p.keys == nil && isWrongType(p.call.err) {
				// MGET answers nil for a key of another type; so does
				// its one-key GET part.
				p.call.reply, p.call.err = nil, nil
				continue
			}
			if rt, ok := p.call.err.(*RetryError); ok && req.kind == splitGet && p.keys == nil {
				// The part went as a GET: the caller sent an MGET, and
				// learns of that (a copy: a call cut off by the context
				// may still be read).
				named := *rt
				named.Command = "MGET"
				return nil, &named
			}
			return nil, p.call.err
		}
	}
	switch req.kind {
	case splitGet:
		out := make([]any, req.nkeys)
		for _, p := range req.parts {
			if p.keys == nil && p.call.info == getInfo { // a GET
				out[p.first] = p.call.reply
				continue
			}
			if p.keys == nil { // a one-key MGET (noGetParts)
				vals, ok := p.call.reply.([]any)
				if !ok || len(vals) != 1 {
					return nil, fmt.Errorf("%w: MGET part returned %T", ErrBadCommand, p.call.reply)
				}
				out[p.first] = vals[0]
				continue
			}
			vals, ok := p.call.reply.([]any)
			if !ok || len(vals) != len(p.keys) {
				return nil, fmt.Errorf("%w: MGET part returned %T", ErrBadCommand, p.call.reply)
			}
			for j, k := range p.keys {
				out[k] = vals[j]
			}
		}
		return out, nil
	case splitSet:
		return "OK", nil
	default:
		var sum int64
		for _, p := range req.parts {
			n, err := redis.Int64(p.call.reply, nil)
			if err != nil {
				return nil, errtext.Errorf("shardis: %s part: %w", strings.ToUpper(p.call.name), err)
			}
			sum += n
		}
		return sum, nil
	}
}

func crossShardError(loc locator, name string, args []any, pos []int) error {
	e := &CrossShardError{Command: strings.ToUpper(name)}
	for _, p := range pos {
		_, g, _ := loc.locate(args[p])
		e.Keys = append(e.Keys, KeyOwner{Key: keyString(args[p]), Owner: loc.groupLabel(g)})
	}
	return e
}

// isWrongType reports a WRONGTYPE error reply.
func isWrongType(err error) bool {
	re, ok := err.(redis.Error)
	return ok && strings.HasPrefix(string(re), "WRONGTYPE")
}
