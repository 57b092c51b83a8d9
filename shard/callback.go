package shard

import (
	"context"
	"fmt"
	"log"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"
)

// PanicError is a panic of code the client ran for the program (a
// Router's Route or Nodes, a hook, a HealthCheck, the function given to
// ForEachShard, ForEachMaster or ForEachNode) that the client recovered.
//
// The client recovers such a panic where the code runs, on whichever
// goroutine that is, and goes on as if the code had returned:
//
//   - when the code ran for one call, the call gets the panic back as an
//     error that matches *PanicError (errors.As): Route's panic fails the
//     command it was routing; a ForEachShard function's panic is that
//     node's *NodeError (its connection is closed, not pooled); a
//     HealthCheck's panic counts as a failed check (and is reported, as
//     below).
//   - otherwise (a hook, Router.Nodes) it goes to Hooks.Panic, or, when
//     that is not set, to the standard logger with its stack, as net/http
//     does with a handler's panic. A Router whose Nodes panicked is taken
//     to list the nodes its Nodes returned last; in New, Config.Validate
//     and StartMigration, which have no such list yet, the panic is their
//     error, which also matches ErrBadConfig.
//
// A panic is not left to unwind through the client even on the caller's
// own goroutine: the code runs in the middle of the client's bookkeeping
// (a migration's fence counts a command before its key is routed), which
// a panic would leave half done, and it may run on a goroutine the client
// started, where no caller could recover it. The function given to
// Client.Tx is the exception: it runs on the caller's goroutine with
// nothing of the client's half done, and its panic goes up to the caller
// unchanged, its connection given back (UNWATCH) or closed.
type PanicError struct {
	// Callback names the code that panicked: "Router.Route",
	// "Router.Nodes", "Hooks.Command", "HealthCheck", "ForEachShard", ...
	Callback string
	// Value is the value the code passed to panic.
	Value any
	// Stack is the stack of the goroutine that panicked, from the panic.
	Stack []byte
}

// Error says what panicked and with what value (not the stack).
func (e *PanicError) Error() string {
	return fmt.Sprintf("shardis: %s panicked: %v", e.Callback, e.Value)
}

// Unwrap returns Value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

func newPanicError(callback string, v any) *PanicError {
	if jp, ok := v.(*joinedPanic); ok {
		// A hook joined by JoinHooks: its own value and stack.
		return &PanicError{Callback: callback, Value: jp.value, Stack: jp.stack}
	}
	return &PanicError{Callback: callback, Value: v, Stack: debug.Stack()}
}

// reportPanic hands a recovered panic that has no caller to return to to
// Hooks.Panic, or to the standard logger.
func (c *Client) reportPanic(e *PanicError) {
	if h := c.onPanic; h != nil {
		callUser1(c, "Hooks.Panic", h, e)
		return
	}
	logPanic(e)
}

func logPanic(e *PanicError) {
	log.Printf("%v\n%s", e, e.Stack)
}

// enterCallback counts code of the program's that c runs now (see
// insideCallback); leaveCallback, deferred, uncounts it.
func (c *Client) enterCallback() { c.callbacks.Add(1) }
func (c *Client) leaveCallback() { c.callbacks.Add(-1) }

// recovered is deferred by the callUser functions: it recovers a panic of
// the program's code and reports it, and uncounts the callback.
func (c *Client) recovered(callback string) {
	defer c.leaveCallback()
	if v := recover(); v != nil {
		e := newPanicError(callback, v)
		if callback == "Hooks.Panic" {
			logPanic(e) // not to itself again
			return
		}
		c.reportPanic(e)
	}
}

// The callUser functions run the program's code: each recovers a panic
// (see PanicError), and their frames tell Close that it was called from
// inside such code (insideCallback). They are not inlined, so that their
// frames are there to be found.

//go:noinline
func callUser0(c *Client, callback string, f func()) {
	c.enterCallback()
	defer c.recovered(callback)
	f()
}

//go:noinline
func callUser1[A any](c *Client, callback string, f func(A), a A) {
	c.enterCallback()
	defer c.recovered(callback)
	f(a)
}

//go:noinline
func callUser2[A, B any](c *Client, callback string, f func(A, B), a A, b B) {
	c.enterCallback()
	defer c.recovered(callback)
	f(a, b)
}

// callUserStart runs a Start hook; after a panic the operation keeps its
// context (a nil result), or, when the hook joined others (JoinHooks),
// the context they returned.
//
//go:noinline
func callUserStart(c *Client, f func(context.Context, *Op) context.Context, ctx context.Context, op *Op) (next context.Context) {
	c.enterCallback()
	defer c.leaveCallback()
	defer func() {
		if v := recover(); v != nil {
			if jp, ok := v.(*joinedPanic); ok {
				next = jp.ctx
			}
			c.reportPanic(newPanicError("Hooks.Start", v))
		}
	}()
	return f(ctx, op)
}

// callUserErr runs code whose panic becomes its error.
//
//go:noinline
func callUserErr(c *Client, callback string, f func() error) (err error) {
	c.enterCallback()
	defer c.leaveCallback()
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(callback, v)
		}
	}()
	return f()
}

//go:noinline
func callUserRoute(c *Client, r Router, key string) (n Node, err error) {
	c.enterCallback()
	defer c.leaveCallback()
	defer func() {
		if v := recover(); v != nil {
			n, err = Node{}, newPanicError("Router.Route", v)
		}
	}()
	return r.Route(key)
}

//go:noinline
func callUserNodes(c *Client, r Router) (nodes []Node, perr *PanicError) {
	c.enterCallback()
	defer c.leaveCallback()
	defer func() {
		if v := recover(); v != nil {
			nodes, perr = nil, newPanicError("Router.Nodes", v)
		}
	}()
	return r.Nodes(), nil
}

//go:noinline
func callUserCheck(c *Client, check HealthCheck, ctx context.Context, conn redis.Conn, node Node) (err error) {
	c.enterCallback()
	defer c.leaveCallback()
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError("HealthCheck", v)
		}
	}()
	return check(ctx, conn, node)
}

// callUserPrefix is what the names of the callUser functions' frames
// start with.
var callUserPrefix = func() string {
	name := runtime.FuncForPC(reflect.ValueOf(callUser0).Pointer()).Name()
	return strings.TrimSuffix(name, "0")
}()

// insideCallback reports whether the calling goroutine may be running
// code of the program's that c called: c runs such code now (on some
// goroutine), and a frame of a callUser function is on this goroutine's
// stack. A callback of another client only (a hook of client A that
// closes client B) is not one of c's: B's Close need not fear waiting for
// itself. (The frames do not tell whose callback they are: while c runs
// one elsewhere, another client's is taken for c's, to be safe.)
func (c *Client) insideCallback() bool {
	if c.callbacks.Load() == 0 {
		return false
	}
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, callUserPrefix) {
			return true
		}
		if !more {
			return false
		}
	}
}

// guardedRouter is the program's Router as the client calls it: Route's
// panic is its error, and Nodes' panic is reported and answered with the
// list Nodes returned last. Nodes lists each address once, under its
// first name: a Router that places two ranges of keys on one server may
// list it under two names, and the client has one node for it, which
// ForEachShard and Scan must visit once. Route's answer spelt otherwise
// than the listed node it names ("localhost:P" for "127.0.0.1:P") is that
// node (routeView).
type guardedRouter struct {
	c    *Client
	r    Router
	view atomic.Pointer[routeView] // what Nodes returned last
}

func (g *guardedRouter) Route(key string) (Node, error) {
	n, err := callUserRoute(g.c, g.r, key)
	if err != nil {
		return n, err
	}
	v := g.view.Load()
	if v == nil {
		return n, nil
	}
	if res, ok := v.known(n.Addr); ok {
		return res.apply(n)
	}
	// An address the list does not hold: the Router may have changed
	// its nodes since they were read (a tick ago), so read them now.
	g.Nodes()
	return g.view.Load().listedAs(n)
}

func (g *guardedRouter) Nodes() []Node {
	nodes, perr := callUserNodes(g.c, g.r)
	if perr != nil {
		g.c.reportPanic(perr)
		if v := g.view.Load(); v != nil {
			return slices.Clone(v.nodes)
		}
		return nil
	}
	nodes = oncePerAddr(nodes)
	if v := g.view.Load(); v == nil || !slices.Equal(v.nodes, nodes) {
		g.view.Store(newRouteView(slices.Clone(nodes)))
	}
	return nodes
}

// oncePerAddr returns nodes without the ones whose address an earlier
// node has; nodes itself when there are none (the usual case), so that
// the program's slice is never written.
func oncePerAddr(nodes []Node) []Node {
	seen := make(map[string]struct{}, len(nodes))
	var out []Node
	for i, n := range nodes {
		if _, dup := seen[n.Addr]; dup {
			if out == nil {
				out = slices.Clone(nodes[:i])
			}
			continue
		}
		seen[n.Addr] = struct{}{}
		if out != nil {
			out = append(out, n)
		}
	}
	if out == nil {
		return nodes
	}
	return out
}

// load reads the Router's nodes for a client that holds none of them yet
// (New, a migration's start): a panic there is an error matching
// ErrBadConfig and *PanicError, there being no list from before to keep
// (taken as an empty one, Route's answers would be used as written: no
// other spelling mapped to its listed node, no address with credentials
// refused). Later calls of Nodes that panic fall back on this list.
func (g *guardedRouter) load() error {
	nodes, perr := callUserNodes(g.c, g.r)
	if perr != nil {
		return badConfigf("%w", perr)
	}
	g.view.Store(newRouteView(slices.Clone(oncePerAddr(nodes))))
	return nil
}

// routerCall runs code of a Router's for Validate and New, before there
// is a client (its Nodes, its TopologyID): a panic is an error matching
// ErrBadConfig and *PanicError, named after callback.
func routerCall[T any](callback string, f func() T) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = badConfigf("%w", newPanicError(callback, p))
		}
	}()
	return f(), nil
}

// checkedTopologyID is TopologyID for New and StartMigration: a panic of
// the Router's code it runs (its TopologyID, or its Nodes) is an error,
// as routerCall makes it.
func checkedTopologyID(cfg Config) (string, error) {
	callback := "Router.Nodes"
	if _, ok := cfg.Router.(TopologyIDer); ok {
		callback = "TopologyIDer.TopologyID"
	}
	return routerCall(callback, func() string { return TopologyID(cfg) })
}

// userRouter returns the program's Router behind r.
func userRouter(r Router) Router {
	if g, ok := r.(*guardedRouter); ok {
		return g.r
	}
	return r
}
