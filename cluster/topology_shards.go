package cluster

import "fmt"

// ParseShards builds a Table from a CLUSTER SHARDS reply (Redis 7.0 and
// later) as redigo returns it: an array of shards, each a flat map
// {"slots": [start, end, ...], "nodes": [node-map, ...]}, each node map
// with the keys id, port, tls-port, ip, endpoint, hostname, role,
// replication-offset and health. Unknown keys are ignored. asked is the
// host:port the command was sent to.
//
// The node's address is its "endpoint" with its "port" (or "tls-port"
// when the node has no plain port; see ParseShardsTLS for TLS clients of
// servers that have both):
//
//   - endpoint "" (or missing or null) means the host of asked;
//   - endpoint "?" means the node announces no hostname although the
//     cluster prefers hostnames: its "ip" is used when not empty; an
//     empty "ip" with the port of asked is the node that answered, which
//     does not know its own IP (a cluster of one node), and means the
//     host of asked; otherwise the node is unreachable;
//   - any other endpoint (an IP or a hostname) is dialed as it is, and
//     the "hostname" field, when present, is kept in NodeInfo.Hostname.
//
// A node without an address (an empty "ip" and no port: Redis lists so
// a node flagged noaddr, whose address answered with another node ID) is
// unreachable. Replicas whose health is "fail", and unreachable replicas,
// are left out. Replicas whose health is "loading" (not synced yet) stay in the
// shard with that Health, but Table.Replicas does not offer them for
// reads. A shard without slots whose master failed or is unreachable is
// left out; a shard that owns slots but has no reachable master is an
// error. A master whose health is "fail" but still owns its slots (before
// a failover) is kept, with that Health. A shard that lists two masters
// neither of which failed (Redis 7.2 and later, during a failover until
// the old master is demoted), or that owns slots and lists only failed
// masters, two or more, is an ErrAmbiguous error: the reply does not say
// which one owns the slots.
//
// Errors wrap ErrMalformed (saying where, e.g. "shard 2 node 1: port is
// not an integer", indexes counting from 0), ErrIncomplete or
// ErrAmbiguous. A master with the endpoint "?" and no usable IP is an
// ErrMalformed error that also wraps ErrNoHostname.
func ParseShards(reply any, asked string) (*Table, error) {
	return parseShards(reply, asked, false)
}

// ParseShardsTLS is ParseShards for a client that connects over TLS: a
// node's "tls-port" is used when it has one, and its "port" otherwise.
func ParseShardsTLS(reply any, asked string) (*Table, error) {
	return parseShards(reply, asked, true)
}

// shardsNodeEntry is one node map of a CLUSTER SHARDS reply.
type shardsNodeEntry struct {
	info           NodeInfo // Addr is "" when unreachable
	port, tlsPort  int64
	endpoint, ip   string
	role           string
	hasPort, hasTL bool
	hasIP          bool
}

func parseShards(reply any, asked string, useTLS bool) (*Table, error) {
	list, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: CLUSTER SHARDS reply is %s, not an array", ErrMalformed, kind(reply))
	}
	shards := make([]Shard, 0, len(list))
	for i, item := range list {
		s, keep, err := parseShard(item, asked, useTLS)
		if err != nil {
			cause := ErrMalformed
			if _, ok := err.(twoMasters); ok {
				cause = ErrAmbiguous
			}
			return nil, fmt.Errorf("%w: CLUSTER SHARDS shard %d: %w", cause, i, err)
		}
		if keep {
			shards = append(shards, s)
		}
	}
	return newTable(shards, false)
}

// parseShard reads one shard map. keep is false for a shard that serves
// no slot and has no usable master. The error is the bare reason, without
// ErrMalformed.
func parseShard(item any, asked string, useTLS bool) (s Shard, keep bool, err error) {
	fields, ok := item.([]any)
	if !ok {
		return s, false, fmt.Errorf("is %s, not a map", kind(item))
	}
	if len(fields)%2 != 0 {
		return s, false, fmt.Errorf("map has an odd number (%d) of elements", len(fields))
	}
	var slots, nodes []any
	var hasSlots, hasNodes bool
	for k := 0; k < len(fields); k += 2 {
		key, ok := word(fields[k])
		if !ok {
			return s, false, fmt.Errorf("key %d is %s, not a string", k/2, kind(fields[k]))
		}
		switch key {
		case "slots":
			if slots, ok = fields[k+1].([]any); !ok {
				return s, false, fmt.Errorf("slots is %s, not an array", kind(fields[k+1]))
			}
			hasSlots = true
		case "nodes":
			if nodes, ok = fields[k+1].([]any); !ok {
				return s, false, fmt.Errorf("nodes is %s, not an array", kind(fields[k+1]))
			}
			hasNodes = true
		}
	}
	if !hasSlots {
		return s, false, fmt.Errorf("no slots field")
	}
	if !hasNodes {
		return s, false, fmt.Errorf("no nodes field")
	}
	if s.Ranges, err = parseSlotPairs(slots); err != nil {
		return s, false, err
	}
	var masters []shardsNodeEntry
	var masterAt []int
	for j, item := range nodes {
		n, err := parseShardNode(item, asked, useTLS)
		if err != nil {
			return s, false, fmt.Errorf("node %d: %s", j, err)
		}
		switch n.role {
		case RoleMaster:
			masters, masterAt = append(masters, n), append(masterAt, j)
		default:
			if n.info.Addr != "" && n.info.Health != HealthFail {
				s.Replicas = append(s.Replicas, n.info)
			}
		}
	}
	// A shard can list a failed old master beside the new one after a
	// failover; the one that is not failed serves the shard. When all of
	// them failed, the reply does not say which one owns the slots.
	if len(masters) > 1 {
		var alive []shardsNodeEntry
		var aliveAt []int
		for k, m := range masters {
			if m.info.Health != HealthFail {
				alive, aliveAt = append(alive, m), append(aliveAt, masterAt[k])
			}
		}
		if len(alive) == 0 && len(s.Ranges) > 0 {
			return s, false, twoMasters{masterAt[0], masterAt[1]}
		}
		masters, masterAt = alive, aliveAt
	}
	switch {
	case len(masters) > 1:
		return s, false, twoMasters{masterAt[0], masterAt[1]}
	case len(masters) == 0 && len(s.Ranges) > 0:
		return s, false, fmt.Errorf("owns slots but lists no master")
	case len(masters) == 0:
		return s, false, nil
	}
	m := masters[0]
	if len(s.Ranges) == 0 && (m.info.Addr == "" || m.info.Health == HealthFail) {
		return s, false, nil
	}
	if m.info.Addr == "" {
		return s, false, noAddressError(masterAt[0], m.endpoint, m.ip)
	}
	s.Master = m.info
	return s, true, nil
}

// twoMasters is parseShard's error for a shard that lists two masters
// neither of which failed (a failover under way): ErrAmbiguous.
type twoMasters [2]int

func (e twoMasters) Error() string {
	return fmt.Sprintf("nodes %d and %d are both masters", e[0], e[1])
}

// parseSlotPairs reads the flat [start, end, start, end, ...] slots array.
func parseSlotPairs(slots []any) ([]SlotRange, error) {
	if len(slots)%2 != 0 {
		return nil, fmt.Errorf("slots has an odd number (%d) of elements", len(slots))
	}
	ranges := make([]SlotRange, 0, len(slots)/2)
	for k := 0; k < len(slots); k += 2 {
		start, ok1 := integer(slots[k])
		end, ok2 := integer(slots[k+1])
		switch {
		case !ok1 || !ok2:
			return nil, fmt.Errorf("slot range %d is not two integers", k/2)
		case !validSlot(start) || !validSlot(end) || start > end:
			return nil, fmt.Errorf("slot range %d-%d is not within 0-%d", start, end, SlotCount-1)
		}
		ranges = append(ranges, SlotRange{Start: int(start), End: int(end)})
	}
	return ranges, nil
}

// parseShardNode reads one node map and resolves its address; info.Addr
// is "" when the node cannot be reached.
func parseShardNode(item any, asked string, useTLS bool) (n shardsNodeEntry, err error) {
	fields, ok := item.([]any)
	if !ok {
		return n, fmt.Errorf("is %s, not a map", kind(item))
	}
	if len(fields)%2 != 0 {
		return n, fmt.Errorf("map has an odd number (%d) of elements", len(fields))
	}
	for k := 0; k < len(fields); k += 2 {
		key, ok := word(fields[k])
		if !ok {
			return n, fmt.Errorf("key %d is %s, not a string", k/2, kind(fields[k]))
		}
		v := fields[k+1]
		switch key {
		case "id":
			n.info.ID, ok = text(v)
		case "port":
			n.port, ok = integer(v)
			n.hasPort = true
		case "tls-port":
			n.tlsPort, ok = integer(v)
			n.hasTL = true
		case "ip":
			n.ip, ok = word(v)
			n.hasIP = true
		case "endpoint":
			if v != nil {
				n.endpoint, ok = word(v)
			}
		case "hostname":
			n.info.Hostname, ok = word(v)
		case "role":
			n.role, ok = word(v)
		case "health":
			n.info.Health, ok = word(v)
		}
		if !ok {
			what := "a string"
			if key == "port" || key == "tls-port" {
				what = "an integer"
			}
			return n, fmt.Errorf("%s is %s, not %s", key, kind(v), what)
		}
	}
	switch n.role {
	case RoleMaster:
	case RoleReplica, "slave":
		n.role = RoleReplica
	case "":
		return n, fmt.Errorf("no role")
	default:
		return n, fmt.Errorf("unknown role %q", n.role)
	}
	n.info.Role = n.role
	first, second := n.port, n.tlsPort
	hasFirst, hasSecond := n.hasPort, n.hasTL
	if useTLS {
		first, second, hasFirst, hasSecond = second, first, hasSecond, hasFirst
	}
	raw := first
	if !hasFirst || (first == 0 && hasSecond) {
		raw = second
	}
	if !hasFirst && !hasSecond {
		if n.hasIP && n.ip == "" {
			// A node the cluster knows no address of (flagged noaddr:
			// its address answered with another node ID, as when the
			// address was taken by a node of another cluster). Redis
			// lists it with an empty ip and no port; it is unreachable,
			// not a malformed reply.
			return n, nil
		}
		return n, fmt.Errorf("neither port nor tls-port")
	}
	port, ok := validPort(raw)
	if !ok {
		return n, fmt.Errorf("port %d is not within 1-65535", raw)
	}
	if host := resolveHost(n.endpoint, n.ip, n.hasIP, port, asked); host != "" {
		n.info.Addr = joinAddr(host, port)
	}
	return n, nil
}
