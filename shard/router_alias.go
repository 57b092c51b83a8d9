package shard

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/shardis/shardis/internal/addrkey"
)

// routeView is a Router's node list as Nodes returned it, with what its
// Route answers map to. A Route answer whose address the list does not
// hold may be another spelling of a listed node's ("localhost:P" or
// "0.0.0.0:P" for "127.0.0.1:P", compared as Validate compares the
// listed nodes: addrkey.Of): taken as written, it would be a second node
// for the server, with its own pool, its own Stats entry and no health
// check. It is the listed node instead; an answer that spells two listed
// nodes at once (localhost:P when both 127.0.0.1:P and [::1]:P are
// listed) is an error, as either could be meant, and so is one with
// credentials in it. Any other address is a node of its own, as before.
type routeView struct {
	nodes  []Node
	listed map[string]struct{}
	alias  sync.Map // unlisted address -> aliasResult
}

// aliasResult is what an unlisted address of a Route answer maps to.
type aliasResult struct {
	addr string // the listed node's address; "" when none
	err  error
}

func newRouteView(nodes []Node) *routeView {
	v := &routeView{nodes: nodes, listed: make(map[string]struct{}, len(nodes))}
	for _, n := range nodes {
		if !addrkey.HasCredentials(n.Addr) { // refused by resolve
			v.listed[n.Addr] = struct{}{}
		}
	}
	return v
}

// known returns what addr maps to when it is listed or was resolved
// against this list before.
func (v *routeView) known(addr string) (aliasResult, bool) {
	if _, ok := v.listed[addr]; ok {
		return aliasResult{}, true
	}
	if r, ok := v.alias.Load(addr); ok {
		return r.(aliasResult), true
	}
	return aliasResult{}, false
}

// listedAs returns n with the address of the listed node it names.
func (v *routeView) listedAs(n Node) (Node, error) {
	res, ok := v.known(n.Addr)
	if !ok {
		res = v.resolve(n.Addr)
		v.alias.Store(n.Addr, res)
	}
	return res.apply(n)
}

// apply returns n as the result maps it.
func (r aliasResult) apply(n Node) (Node, error) {
	switch {
	case r.err != nil:
		return Node{}, r.err
	case r.addr != "":
		n.Addr = r.addr
	}
	return n, nil
}

// resolve finds the listed nodes that addr spells.
func (v *routeView) resolve(addr string) aliasResult {
	if addrkey.HasCredentials(addr) {
		// Taken as written, it would be a node whose every error and
		// Stats entry shows them.
		return aliasResult{err: fmt.Errorf("%w: the Router routed a key to %q: an address holds no credentials (set Pool.Username and Pool.Password)",
			ErrBadConfig, addrkey.Redact(addr))}
	}
	forms := addrkey.Of(addr)
	if len(forms) == 0 {
		return aliasResult{}
	}
	var same []Node
	for _, l := range v.nodes {
		for _, f := range addrkey.Of(l.Addr) {
			if slices.Contains(forms, f) {
				same = append(same, l)
				break
			}
		}
	}
	switch len(same) {
	case 0:
		return aliasResult{}
	case 1:
		return aliasResult{addr: same[0].Addr}
	}
	names := make([]string, len(same))
	for i, l := range same {
		names[i] = fmt.Sprintf("%s (%s)", addrkey.Redact(l.String()), addrkey.Redact(l.Addr))
	}
	return aliasResult{err: fmt.Errorf("%w: the Router routed a key to %s, which names more than one of its nodes: %s; route to the listed address",
		ErrBadConfig, addrkey.Redact(addr), strings.Join(names, ", "))}
}
