package redistest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SlotCount is the number of hash slots in a Redis Cluster.
const SlotCount = 16384

// nodeInfo is one line of CLUSTER NODES.
type nodeInfo struct {
	ID       string
	Port     int
	Flags    []string
	MasterID string // "" for a master
	Slots    [][2]int
}

func (n nodeInfo) has(flag string) bool { return slices.Contains(n.Flags, flag) }

// healthy reports whether the node is neither failing nor suspected.
func (n nodeInfo) healthy() bool {
	return !n.has("fail") && !n.has("fail?") && !n.has("handshake") && !n.has("noaddr")
}

func (n nodeInfo) owns(slot int) bool {
	for _, r := range n.Slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// parseNodes parses the CLUSTER NODES reply:
// <id> <ip:port@cport[,hostname]> <flags> <master|-> <ping> <pong> <epoch> <link> [slots...]
func parseNodes(text string) ([]nodeInfo, error) {
	var out []nodeInfo
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("%w: CLUSTER NODES line with %d fields: %q", errProtocol, len(f), line)
		}
		n := nodeInfo{ID: f[0], Flags: strings.Split(f[2], ",")}
		addr, _, _ := strings.Cut(f[1], ",") // drop the hostname
		addr, _, _ = strings.Cut(addr, "@")  // drop the bus port
		i := strings.LastIndexByte(addr, ':')
		port, err := strconv.Atoi(addr[i+1:])
		if i < 0 || err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("%w: CLUSTER NODES address %q", errProtocol, f[1])
		}
		n.Port = port
		if f[3] != "-" {
			n.MasterID = f[3]
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") { // a slot being migrated or imported
				continue
			}
			lo, hi, isRange := strings.Cut(s, "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := a, error(nil)
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || a < 0 || b < a || b >= SlotCount {
				return nil, fmt.Errorf("%w: CLUSTER NODES slot range %q", errProtocol, s)
			}
			n.Slots = append(n.Slots, [2]int{a, b})
		}
		out = append(out, n)
	}
	return out, nil
}

// topology reads CLUSTER NODES from the first running node that answers
// within a second.
func (c *Cluster) topology(ctx context.Context) ([]nodeInfo, error) {
	var lastErr error = fmt.Errorf("%w: no node is running", ErrNotRunning)
	for _, s := range c.Nodes {
		if !s.running() {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		v, err := s.query(qctx, "CLUSTER", "NODES")
		cancel()
		if err != nil {
			lastErr = fmt.Errorf("shardis: CLUSTER NODES on %s: %w", s.Addr, err)
			continue
		}
		text, _ := v.(string)
		return parseNodes(text)
	}
	return nil, lastErr
}

// Masters returns the healthy masters (not flagged fail or fail?) as
// CLUSTER NODES shows them now, ordered by their lowest slot (masters
// without slots last). It returns nil when no node answers.
func (c *Cluster) Masters() []*Server {
	nodes, err := c.topology(context.Background())
	if err != nil {
		return nil
	}
	masters := healthyMasters(nodes)
	out := make([]*Server, 0, len(masters))
	for _, m := range masters {
		if s := c.byPort[m.Port]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Replicas returns the healthy replicas as CLUSTER NODES shows them now,
// in the order of their masters (see Masters), then by port. It returns
// nil when no node answers.
func (c *Cluster) Replicas() []*Server {
	nodes, err := c.topology(context.Background())
	if err != nil {
		return nil
	}
	rank := make(map[string]int)
	for i, m := range healthyMasters(nodes) {
		rank[m.ID] = i
	}
	var replicas []nodeInfo
	for _, n := range nodes {
		if n.has("slave") && n.healthy() {
			replicas = append(replicas, n)
		}
	}
	slices.SortFunc(replicas, func(a, b nodeInfo) int {
		ra, oka := rank[a.MasterID]
		rb, okb := rank[b.MasterID]
		if !oka {
			ra = len(rank)
		}
		if !okb {
			rb = len(rank)
		}
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(a.Port, b.Port))
	})
	var out []*Server
	for _, r := range replicas {
		if s := c.byPort[r.Port]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

func healthyMasters(nodes []nodeInfo) []nodeInfo {
	var out []nodeInfo
	for _, n := range nodes {
		if n.has("master") && n.healthy() {
			out = append(out, n)
		}
	}
	first := func(n nodeInfo) int {
		if len(n.Slots) == 0 {
			return SlotCount
		}
		lo := SlotCount
		for _, r := range n.Slots {
			lo = min(lo, r[0])
		}
		return lo
	}
	slices.SortFunc(out, func(a, b nodeInfo) int {
		return cmp.Or(cmp.Compare(first(a), first(b)), cmp.Compare(a.Port, b.Port))
	})
	return out
}

// MasterOfSlot returns the healthy master that CLUSTER NODES says serves
// slot (0..16383) now.
func (c *Cluster) MasterOfSlot(slot int) (*Server, error) {
	if slot < 0 || slot >= SlotCount {
		return nil, fmt.Errorf("%w: slot %d not in 0..%d", ErrInvalid, slot, SlotCount-1)
	}
	nodes, err := c.topology(context.Background())
	if err != nil {
		return nil, err
	}
	for _, n := range healthyMasters(nodes) {
		if n.owns(slot) {
			if s := c.byPort[n.Port]; s != nil {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("shardis: no healthy master of this cluster serves slot %d", slot)
}

// KeyOn returns the first key "{prefix0}", "{prefix1}", ... (each its
// own hash tag) whose slot the master m serves, as CLUSTER NODES shows the
// slots now, and that slot. The slots are computed by the server (CLUSTER
// KEYSLOT on m).
func (c *Cluster) KeyOn(m *Server, prefix string) (string, int, error) {
	if m == nil || c.byPort[m.Port] != m {
		return "", 0, fmt.Errorf("%w: the server is not a node of this cluster", ErrInvalid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), doTimeout)
	defer cancel()
	nodes, err := c.topology(ctx)
	if err != nil {
		return "", 0, err
	}
	var serves func(int) bool
	for _, n := range healthyMasters(nodes) {
		if n.Port == m.Port {
			serves = n.owns
		}
	}
	if serves == nil {
		return "", 0, fmt.Errorf("shardis: %s is not a healthy master of this cluster", m.Addr)
	}
	for i := 0; i < 1<<16; i++ {
		k := fmt.Sprintf("{%s%d}", prefix, i)
		v, err := m.DoContext(ctx, "CLUSTER", "KEYSLOT", k)
		if err != nil {
			return "", 0, fmt.Errorf("shardis: CLUSTER KEYSLOT on %s: %w", m.Addr, err)
		}
		slot, err := strconv.Atoi(v)
		if err != nil {
			return "", 0, fmt.Errorf("%w: CLUSTER KEYSLOT answered %q", errProtocol, v)
		}
		if serves(slot) {
			return k, slot, nil
		}
	}
	return "", 0, fmt.Errorf("shardis: no key with prefix %q falls in a slot of %s", prefix, m.Addr)
}

// OtherMaster returns a healthy master other than s (the first in
// Masters' order), as CLUSTER NODES shows them now: where a test can move
// a slot of s, or which it can stop while s serves on.
func (c *Cluster) OtherMaster(s *Server) (*Server, error) {
	if s == nil || c.byPort[s.Port] != s {
		return nil, fmt.Errorf("%w: the server is not a node of this cluster", ErrInvalid)
	}
	for _, m := range c.Masters() {
		if m != s {
			return m, nil
		}
	}
	return nil, fmt.Errorf("shardis: no healthy master of this cluster other than %s", s.Addr)
}

// ReplicaOf returns a healthy replica of master (the one with the lowest
// port if there are several), as CLUSTER NODES shows it now.
func (c *Cluster) ReplicaOf(master *Server) (*Server, error) {
	if master == nil || c.byPort[master.Port] != master {
		return nil, fmt.Errorf("%w: the server is not a node of this cluster", ErrInvalid)
	}
	nodes, err := c.topology(context.Background())
	if err != nil {
		return nil, err
	}
	id := ""
	for _, n := range nodes {
		if n.Port == master.Port {
			id = n.ID
		}
	}
	if id == "" {
		return nil, fmt.Errorf("shardis: node %s is not in CLUSTER NODES", master.Addr)
	}
	var best *nodeInfo
	for i, n := range nodes {
		if n.MasterID == id && n.has("slave") && n.healthy() && (best == nil || n.Port < best.Port) {
			best = &nodes[i]
		}
	}
	if best == nil || c.byPort[best.Port] == nil {
		return nil, fmt.Errorf("shardis: node %s has no healthy replica", master.Addr)
	}
	return c.byPort[best.Port], nil
}
