package cluster

import "fmt"

// ParseSlots builds a Table from a CLUSTER SLOTS reply as redigo returns
// it: an array of ranges [start, end, master, replica...], each node
// entry [endpoint, port, id, metadata]. asked is the host:port the
// command was sent to.
//
// Node entries of 2 elements (endpoint, port; Redis before 4.0), 3
// elements (with the id; before 7.0) and 4 elements (with the metadata,
// a flat array of name/value pairs) are accepted, and further elements
// are ignored. The endpoint rules are those of ParseShards: an endpoint
// of "" or null means the host of asked; "?" means the node's "ip" from
// the metadata (an empty "ip" with the port of asked: the host of asked,
// as the node that answered does not know its own IP), and an
// unreachable node when there is none; "hostname" in
// the metadata is kept in NodeInfo.Hostname. A node listed with port 0
// and an endpoint of "" or "?" (a node flagged noaddr, whose address
// answered with another node ID) is unreachable. Unreachable replicas are
// left out; an unreachable master is an error.
//
// A master that serves several ranges appears in several entries; they
// are merged into one shard. CLUSTER SLOTS gives no health, so Health is
// "" for every node (the server itself leaves out failed replicas and
// replicas that have not synced yet).
//
// Errors wrap ErrMalformed (saying where, e.g. "range 2 node 1: port is
// not an integer", indexes counting from 0) or ErrIncomplete; a master
// with the endpoint "?" and no usable IP also wraps ErrNoHostname.
func ParseSlots(reply any, asked string) (*Table, error) {
	list, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: CLUSTER SLOTS reply is %s, not an array", ErrMalformed, kind(reply))
	}
	var shards []Shard
	byAddr := make(map[string]int)
	for i, item := range list {
		r, master, replicas, err := parseSlotEntry(item, asked)
		if err != nil {
			return nil, fmt.Errorf("%w: CLUSTER SLOTS range %d: %w", ErrMalformed, i, err)
		}
		k, seen := byAddr[master.Addr]
		if !seen {
			k = len(shards)
			byAddr[master.Addr] = k
			shards = append(shards, Shard{Master: master})
		}
		s := &shards[k]
		s.Ranges = append(s.Ranges, r)
		for _, rep := range replicas {
			if !hasAddr(s.Replicas, rep.Addr) {
				s.Replicas = append(s.Replicas, rep)
			}
		}
	}
	return NewTable(shards)
}

func hasAddr(nodes []NodeInfo, addr string) bool {
	for _, n := range nodes {
		if n.Addr == addr {
			return true
		}
	}
	return false
}

// parseSlotEntry reads one [start, end, master, replica...] entry. The
// error is the bare reason, without ErrMalformed.
func parseSlotEntry(item any, asked string) (r SlotRange, master NodeInfo, replicas []NodeInfo, err error) {
	fields, ok := item.([]any)
	if !ok {
		return r, master, nil, fmt.Errorf("is %s, not an array", kind(item))
	}
	if len(fields) < 3 {
		return r, master, nil, fmt.Errorf("has %d elements, want at least 3", len(fields))
	}
	start, ok1 := integer(fields[0])
	end, ok2 := integer(fields[1])
	switch {
	case !ok1:
		return r, master, nil, fmt.Errorf("start is %s, not an integer", kind(fields[0]))
	case !ok2:
		return r, master, nil, fmt.Errorf("end is %s, not an integer", kind(fields[1]))
	case !validSlot(start) || !validSlot(end) || start > end:
		return r, master, nil, fmt.Errorf("slot range %d-%d is not within 0-%d", start, end, SlotCount-1)
	}
	r = SlotRange{Start: int(start), End: int(end)}
	for j, item := range fields[2:] {
		n, endpoint, ip, err := parseSlotNode(item, asked)
		if err != nil {
			return r, master, nil, fmt.Errorf("node %d: %w", j, err)
		}
		if j == 0 {
			if n.Addr == "" {
				return r, master, nil, noAddressError(0, endpoint, ip)
			}
			n.Role = RoleMaster
			master = n
			continue
		}
		if n.Addr != "" {
			n.Role = RoleReplica
			replicas = append(replicas, n)
		}
	}
	return r, master, replicas, nil
}

// parseSlotNode reads one [endpoint, port, id, metadata, ...] node entry
// and resolves its address; Addr is "" when the node cannot be reached.
// It also returns the endpoint and ip it saw, for error messages.
func parseSlotNode(item any, asked string) (n NodeInfo, endpoint, ip string, err error) {
	hasIP := false
	fields, ok := item.([]any)
	if !ok {
		return n, "", "", fmt.Errorf("is %s, not an array", kind(item))
	}
	if len(fields) < 2 {
		return n, "", "", fmt.Errorf("has %d elements, want at least 2", len(fields))
	}
	if fields[0] != nil {
		if endpoint, ok = text(fields[0]); !ok {
			return n, "", "", fmt.Errorf("endpoint is %s, not a string", kind(fields[0]))
		}
	}
	rawPort, ok := integer(fields[1])
	if !ok {
		return n, "", "", fmt.Errorf("port is %s, not an integer", kind(fields[1]))
	}
	port, ok := validPort(rawPort)
	noAddr := rawPort == 0 && (endpoint == "" || endpoint == unknownEndpoint)
	if !ok && !noAddr {
		return n, "", "", fmt.Errorf("port %d is not within 1-65535", rawPort)
	}
	if len(fields) > 2 {
		if n.ID, ok = text(fields[2]); !ok {
			return n, "", "", fmt.Errorf("id is %s, not a string", kind(fields[2]))
		}
	}
	if len(fields) > 3 {
		meta, ok := fields[3].([]any)
		if !ok {
			return n, "", "", fmt.Errorf("metadata is %s, not a map", kind(fields[3]))
		}
		if len(meta)%2 != 0 {
			return n, "", "", fmt.Errorf("metadata has an odd number (%d) of elements", len(meta))
		}
		for k := 0; k < len(meta); k += 2 {
			key, ok := text(meta[k])
			if !ok {
				return n, "", "", fmt.Errorf("metadata key %d is %s, not a string", k/2, kind(meta[k]))
			}
			switch key {
			case "ip":
				ip, ok = text(meta[k+1])
				hasIP = true
			case "hostname":
				n.Hostname, ok = text(meta[k+1])
			}
			if !ok {
				return n, "", "", fmt.Errorf("metadata %s is %s, not a string", key, kind(meta[k+1]))
			}
		}
	}
	if noAddr {
		// A node the cluster knows no address of (flagged noaddr: its
		// address answered with another node ID): Redis lists it with
		// an empty endpoint and port 0. It is unreachable.
		return n, endpoint, ip, nil
	}
	if host := resolveHost(endpoint, ip, hasIP, port, asked); host != "" {
		n.Addr = joinAddr(host, port)
	}
	return n, endpoint, ip, nil
}
