package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseNodes builds a Table from the text of a CLUSTER NODES reply, one
// node per line:
//
//	<id> <ip>:<port>@<cport>[,<hostname>] <flags> <master-id|-> <ping> <pong> <epoch> <link> [<slot>|<start>-<end>]...
//
// asked is the host:port the command was sent to. An empty ip (a node
// that does not know its own address, shown as ":7000@17000") means the
// host of asked. CLUSTER NODES only shows IPs, so Addr uses the IP even
// when the node announces a hostname, which is kept in Hostname.
//
// Nodes flagged handshake or noaddr, and nodes without an address, are
// left out, as are nodes flagged fail, except a failed master that still
// owns slots (kept with Health "fail", as CLUSTER SLOTS and CLUSTER SHARDS
// report it). Replicas of a master that is left out are left out too. The
// migrating and importing markers of the "myself" line ("[slot->-id]",
// "[slot-<-id]") are ignored: the slot still belongs to the node that
// lists it. Health is "fail" or "" (CLUSTER NODES does not show loading).
//
// Errors wrap ErrMalformed (saying where, e.g. "line 3: slot range
// \"5-3\" ...", lines counting from 1) or ErrIncomplete.
func ParseNodes(text string, asked string) (*Table, error) {
	askedHost := hostOf(asked)
	type replica struct {
		info     NodeInfo
		masterID string
	}
	var shards []Shard
	var replicas []replica
	byID := make(map[string]int)  // master id -> index into shards
	seen := make(map[string]bool) // every node id
	lineNo := 0
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		lineNo++
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		n, err := parseNodeLine(line, askedHost)
		if err != nil {
			return nil, fmt.Errorf("%w: CLUSTER NODES line %d: %s", ErrMalformed, lineNo, err)
		}
		if seen[n.info.ID] {
			return nil, fmt.Errorf("%w: CLUSTER NODES line %d: node id %q appears twice", ErrMalformed, lineNo, n.info.ID)
		}
		seen[n.info.ID] = true
		switch {
		case n.skip && len(n.ranges) > 0:
			return nil, fmt.Errorf("%w: CLUSTER NODES line %d: node %s owns slots but has no usable address (flags %s)",
				ErrMalformed, lineNo, n.info.ID, n.flags)
		case n.skip:
		case n.master:
			if n.info.Health == HealthFail && len(n.ranges) == 0 {
				continue
			}
			byID[n.info.ID] = len(shards)
			shards = append(shards, Shard{Master: n.info, Ranges: n.ranges})
		case len(n.ranges) > 0:
			return nil, fmt.Errorf("%w: CLUSTER NODES line %d: replica %s lists slots", ErrMalformed, lineNo, n.info.ID)
		case n.info.Health != HealthFail:
			replicas = append(replicas, replica{n.info, n.masterID})
		}
	}
	for _, r := range replicas {
		if k, ok := byID[r.masterID]; ok {
			shards[k].Replicas = append(shards[k].Replicas, r.info)
		}
	}
	return NewTable(shards)
}

// nodeLine is one parsed line of CLUSTER NODES.
type nodeLine struct {
	info     NodeInfo
	flags    string
	master   bool   // flagged master (else a replica)
	masterID string // for a replica
	ranges   []SlotRange
	skip     bool // handshake, noaddr, no address, or neither master nor replica
}

// parseNodeLine reads one line. The error is the bare reason, without
// ErrMalformed.
func parseNodeLine(line, askedHost string) (n nodeLine, err error) {
	f := strings.Fields(line)
	if len(f) < 8 {
		return n, fmt.Errorf("%d fields, want at least 8", len(f))
	}
	n.info.ID, n.flags = f[0], f[2]
	addr, hostname, _ := strings.Cut(f[1], ",")
	hostname, _, _ = strings.Cut(hostname, ",")
	n.info.Hostname = hostname
	addr, _, _ = strings.Cut(addr, "@")
	colon := strings.LastIndexByte(addr, ':')
	if colon < 0 {
		return n, fmt.Errorf("address %q has no port", f[1])
	}
	host := strings.TrimSuffix(strings.TrimPrefix(addr[:colon], "["), "]")
	port, perr := strconv.Atoi(addr[colon+1:])
	if perr != nil || port < 0 || port > 65535 {
		return n, fmt.Errorf("address %q: port is not an integer within 0-65535", f[1])
	}
	var replica bool
	for flag := range strings.SplitSeq(n.flags, ",") {
		switch flag {
		case "master":
			n.master = true
		case "slave", "replica":
			replica = true
		case "fail":
			n.info.Health = HealthFail
		case "handshake", "noaddr":
			n.skip = true
		}
	}
	if n.master == replica {
		n.skip = true // noflags, or a contradiction
	}
	if replica && f[3] != "-" {
		n.masterID = f[3]
	}
	for _, tok := range f[8:] {
		if strings.HasPrefix(tok, "[") {
			continue
		}
		lo, hi, isRange := strings.Cut(tok, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b >= SlotCount || a > b {
			return n, fmt.Errorf("slot range %q is not within 0-%d", tok, SlotCount-1)
		}
		n.ranges = append(n.ranges, SlotRange{Start: a, End: b})
	}
	if host == "" {
		host = askedHost
	}
	if host == "" || port == 0 {
		n.skip = true
	} else {
		n.info.Addr = joinAddr(host, port)
	}
	return n, nil
}
