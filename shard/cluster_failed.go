package shard

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
)

// A node that fails leaves the slot table (cluster.Discover leaves out
// nodes flagged fail: a master once its replica took over, a failed
// replica), but it is still part of the cluster until the cluster forgets
// it (CLUSTER FORGET, redis-cli --cluster del-node). Until then the
// client keeps it (settleNodes does not retire it): it is health-checked,
// so that a restarted one is seen at once and the topology refreshed to
// list it again, and Stats reports it, down. Once the cluster no longer
// lists it, it retires like any node that left (nodes.go).
//
// failedNodes are read by discover, from CLUSTER NODES (or CLUSTER
// SHARDS, when an ACL refuses CLUSTER NODES) of a master of the new
// table, only while there is something to tell: nodes of the last
// table that the new one lacks, or nodes kept so far (so that a later
// CLUSTER FORGET is noticed at the next refresh).

// failedNode is a node the cluster still lists that the table leaves
// out, with the role the last table that listed it gave it: its entry of
// that role is the one kept (settleNodes).
type failedNode struct {
	addr    string
	replica bool
}

// testHookBeforeKeepFailed, when set (by tests), runs in a refresh after
// a table was installed and before keepFailed asks the cluster.
var testHookBeforeKeepFailed atomic.Pointer[func(*Client)]

// pendFailed adds to r's list of failed nodes, before t replaces old, the
// nodes of old that t leaves out: neither at their address nor, by node
// ID, at another (a node t names by its hostname instead of its IP is no
// failed node: its old name retires even when keepFailed cannot ask the
// cluster). keepFailed, after the install, asks the
// cluster which of them it still lists (failed) and drops the others;
// until then they stay live, so that a settleNodes in between (a health
// tick) does not retire a node that only failed: its NodeRetired would
// tell every hook that its address left (a metric series deleted), and
// the node would come back without a NodeDown. The caller holds
// r.installMu.
func (r *ClusterRouter) pendFailed(old, t *cluster.Table) {
	if old == nil {
		return
	}
	in := tableNodes(t)
	var list []failedNode
	if p := r.failed.Load(); p != nil {
		list = slices.Clone(*p)
	}
	added := false
	for _, n := range old.Nodes() {
		if !in.has(n) && !slices.ContainsFunc(list, func(f failedNode) bool { return f.addr == n.Addr }) {
			list = append(list, failedNode{addr: n.Addr, replica: n.Role != cluster.RoleMaster})
			added = true
		}
	}
	if !added {
		return
	}
	slices.SortFunc(list, func(a, b failedNode) int { return strings.Compare(a.addr, b.addr) })
	r.failed.Store(&list)
}

// nodeSet is the nodes of a table, by address and by node ID.
type nodeSet struct{ addrs, ids map[string]bool }

// tableNodes returns the nodes of t.
func tableNodes(t *cluster.Table) nodeSet {
	s := nodeSet{addrs: map[string]bool{}, ids: map[string]bool{}}
	for _, n := range t.Nodes() {
		s.addrs[n.Addr] = true
		if n.ID != "" {
			s.ids[n.ID] = true
		}
	}
	return s
}

// has reports whether n, a node of another table, is in the set: at its
// address, or by its ID at another address (the table names it by its
// hostname instead of its IP, say), which makes n's address an old name
// of a node in the table, not a failed node.
func (s nodeSet) has(n cluster.NodeInfo) bool {
	return s.addrs[n.Addr] || n.ID != "" && s.ids[n.ID]
}

// keepFailed updates r's list of nodes the cluster still lists but t
// leaves out, after old was replaced by t (or kept: old may equal t). It
// reports whether the list changed.
func (c *Client) keepFailed(ctx context.Context, r *ClusterRouter, old, t *cluster.Table) bool {
	in := map[string]bool{}
	for _, n := range t.Nodes() {
		in[n.Addr] = true
	}
	var left []failedNode // not in t: kept so far, or in old
	var prev []failedNode
	if p := r.failed.Load(); p != nil {
		prev = *p
	}
	for _, f := range prev {
		if !in[f.addr] {
			left = append(left, f)
		}
	}
	if old != nil && old != t {
		inT := tableNodes(t)
		for _, n := range old.Nodes() {
			if !inT.has(n) && !slices.ContainsFunc(left, func(f failedNode) bool { return f.addr == n.Addr }) {
				left = append(left, failedNode{addr: n.Addr, replica: n.Role != cluster.RoleMaster})
			}
		}
	}
	var keep []failedNode
	if len(left) > 0 {
		switch listed, how := c.clusterNodeAddrs(ctx, t); how {
		case listKnown:
			// A node t names by another of its addresses (its hostname
			// instead of its IP, once cluster-preferred-endpoint-type
			// changed; the host a seed was named by, with unknown-endpoint,
			// where the list shows only IPs) is in t, not failed: its old
			// name retires. t's node IDs say so whatever the list names;
			// the list's addresses, for a table without IDs.
			inT := map[string]bool{}
			for _, n := range t.Nodes() {
				if n.ID != "" {
					inT[n.ID] = true
				}
			}
			for a, id := range listed {
				if in[a] {
					inT[id] = true
				}
			}
			for _, f := range left {
				if id, ok := listed[f.addr]; ok && !inT[id] {
					keep = append(keep, f)
				}
			}
		case listUnknown:
			// No master answered: a moment's trouble says nothing about
			// the nodes, so they stay until a refresh can tell.
			keep = left
		case listRefused:
			// Every master asked allows (NOPERM) or knows neither CLUSTER
			// NODES nor CLUSTER SHARDS: the client can never tell, and a node the cluster
			// forgot must not be checked for good, so the nodes that left
			// retire.
		}
	}
	slices.SortFunc(keep, func(a, b failedNode) int { return strings.Compare(a.addr, b.addr) })
	if slices.Equal(keep, prev) {
		return false
	}
	if len(keep) == 0 {
		r.failed.Store(nil)
	} else {
		r.failed.Store(&keep)
	}
	return true
}

// listHow says what clusterNodeAddrs learned.
type listHow uint8

const (
	listKnown   listHow = iota // the cluster's node list
	listUnknown                // no master answered (or each was busy, loading...)
	listRefused                // every master asked refused both commands for good (an ACL)
)

// clusterNodeAddrs returns the addresses that CLUSTER NODES (or, when
// that is refused, CLUSTER SHARDS) of a master of t lists, failed nodes
// included, nodes in handshake or without an address left out, each
// with the ID of its node (a node has several: IP, hostname, ports). It asks
// the first three masters not marked down at once and takes the first
// list: one of them that hangs does not hold the refresh (and everything
// waiting on it) up for a dial and a read timeout while the others answer.
func (c *Client) clusterNodeAddrs(ctx context.Context, t *cluster.Table) (map[string]string, listHow) {
	var ask []string
	for _, m := range t.Masters() {
		if len(ask) == 3 {
			break
		}
		if i, ok := c.nodes.lookup(m.Addr); ok && c.nodes.get(i).down.Load() {
			continue
		}
		ask = append(ask, m.Addr)
	}
	type answer struct {
		addrs map[string]string
		how   listHow
	}
	ctx, cancel := context.WithCancel(ctx)
	answers := make(chan answer, len(ask))
	var wg sync.WaitGroup
	defer func() {
		cancel() // the masters still asked give up at once
		wg.Wait()
	}()
	for _, addr := range ask {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addrs, h := c.askClusterNodes(ctx, addr)
			answers <- answer{addrs, h}
		}()
	}
	// A refusal is no listing: only when every master asked refused for
	// good is the list unknowable. One that refused while the others were
	// silent (down, hung: an ACL differs from node to node) says nothing
	// about the nodes, which stay until a refresh can tell.
	refused := 0
	for range ask {
		switch a := <-answers; a.how {
		case listKnown:
			return a.addrs, a.how
		case listRefused:
			refused++
		}
	}
	if len(ask) > 0 && refused == len(ask) {
		return nil, listRefused
	}
	return nil, listUnknown
}

func (c *Client) askClusterNodes(ctx context.Context, addr string) (map[string]string, listHow) {
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout()+c.readTimeout)
	defer cancel()
	conn, err := c.topologyDialer(ctx, addr)
	if err != nil {
		return nil, listUnknown
	}
	defer conn.Close()
	text, err := redis.String(redis.DoContext(conn, ctx, "CLUSTER", "NODES"))
	if err == nil {
		if addrs := clusterNodesAddrs(text, addr); len(addrs) > 0 {
			return addrs, listKnown
		}
		// A node lists itself at least: a list without a node it could
		// read says nothing, and taken as known would retire every
		// failed node.
		return nil, listUnknown
	}
	var nodesErr redis.Error
	if !errors.As(err, &nodesErr) {
		return nil, listUnknown
	}
	// Refused (an ACL without CLUSTER NODES), or a node busy for now:
	// CLUSTER SHARDS lists the failed nodes too.
	reply, err := redis.DoContext(conn, ctx, "CLUSTER", "SHARDS")
	if err == nil {
		if addrs, ok := clusterShardsAddrs(reply, addr); ok {
			return addrs, listKnown
		}
		return nil, listUnknown
	}
	var shardsErr redis.Error
	if errors.As(err, &shardsErr) && refusedForGood(nodesErr) && refusedForGood(shardsErr) {
		return nil, listRefused
	}
	return nil, listUnknown // BUSY, LOADING and the like: for now only
}

// refusedForGood reports whether a server's error reply refuses a
// command for as long as the client's ACL or the server's version stay:
// NOPERM, or an unknown command or subcommand.
func refusedForGood(re redis.Error) bool {
	s := string(re)
	return strings.HasPrefix(s, "NOPERM") || strings.HasPrefix(s, "ERR unknown")
}

// clusterShardsAddrs reads the node addresses of a CLUSTER SHARDS reply,
// failed nodes included: each node's endpoint, ip and hostname, each with
// its port and its tls-port, as the slot table may name it any of these
// ways, mapped to the node's id; asked is the node that replied (for an
// empty endpoint). ok is
// false for a reply of another shape: not an array of shards that each
// hold an array of nodes, each a map, or one that names no node (a node
// lists itself at least). Such a reply says nothing about the failed
// nodes, which an empty list taken as known would all retire.
func clusterShardsAddrs(reply any, asked string) (map[string]string, bool) {
	askedHost, _, err := net.SplitHostPort(asked)
	if err != nil {
		askedHost = ""
	}
	shards, ok := reply.([]any)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for i, sh := range shards {
		nodes, ok := mapField(sh, "nodes").([]any)
		if !ok {
			return nil, false
		}
		for j, n := range nodes {
			if _, ok := n.([]any); !ok {
				return nil, false
			}
			id, _ := redis.String(mapField(n, "id"), nil)
			if id == "" {
				id = "shard " + strconv.Itoa(i) + " node " + strconv.Itoa(j)
			}
			var hosts, ports []string
			for _, k := range []string{"endpoint", "ip", "hostname"} {
				v := mapField(n, k)
				h, _ := redis.String(v, nil)
				if k == "endpoint" && (v == nil || h == "") {
					h = askedHost
				}
				if h != "" && h != "?" && !strings.ContainsAny(h, "[]") {
					hosts = append(hosts, h)
				}
			}
			for _, k := range []string{"port", "tls-port"} {
				if p, err := redis.Int64(mapField(n, k), nil); err == nil && p >= 1 && p <= 65535 {
					ports = append(ports, strconv.FormatInt(p, 10))
				}
			}
			for _, h := range hosts {
				for _, p := range ports {
					out[net.JoinHostPort(h, p)] = id
				}
			}
		}
	}
	return out, len(out) > 0
}

// mapField returns the value of key in a flat RESP2 map ([k, v, k, v,
// ...]), or nil.
func mapField(m any, key string) any {
	fields, _ := m.([]any)
	for k := 0; k+1 < len(fields); k += 2 {
		if name, err := redis.String(fields[k], nil); err == nil && name == key {
			return fields[k+1]
		}
	}
	return nil
}

// clusterNodesAddrs reads the node addresses of a CLUSTER NODES reply
// (<id> <ip>:<port>@<cport>[,<hostname>] <flags> ...): each node's IP
// address and, when it announces a hostname, its hostname address, as the
// slot table may name it either way, mapped to the node's ID; asked is
// the node that replied (for an empty ip).
func clusterNodesAddrs(text, asked string) map[string]string {
	askedHost, _, err := net.SplitHostPort(asked)
	if err != nil {
		askedHost = ""
	}
	out := map[string]string{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 3 || strings.Contains(f[2], "handshake") || strings.Contains(f[2], "noaddr") {
			continue
		}
		a, aux, _ := strings.Cut(f[1], ",")
		a, _, _ = strings.Cut(a, "@")
		colon := strings.LastIndexByte(a, ':')
		if colon < 0 {
			continue
		}
		port := a[colon+1:]
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || port[0] == '+' {
			continue // no port (0: a node without an address), or not one
		}
		host := strings.TrimSuffix(strings.TrimPrefix(a[:colon], "["), "]")
		if host == "" {
			host = askedHost
		}
		if host != "" && !strings.ContainsAny(host, "[]") {
			out[net.JoinHostPort(host, port)] = f[0]
		}
		// The hostname the node announces, which the table uses with
		// cluster-preferred-endpoint-type hostname (later servers add
		// name=value fields after it).
		if name, _, _ := strings.Cut(aux, ","); name != "" && !strings.ContainsAny(name, "=[]") {
			out[net.JoinHostPort(name, port)] = f[0]
		}
	}
	return out
}
