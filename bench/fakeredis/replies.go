package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// node is one master of the simulated cluster.
type node struct {
	id         string // 40 hex digits
	port       int
	start, end int // the slot range it owns
}

// topology is the simulated cluster: masters only, on 127.0.0.1, each
// owning one contiguous range of slots as redis-cli --cluster create
// assigns them.
type topology []node

// newTopology spreads the 16,384 slots over the given ports in order, as
// redis-cli --cluster create does (in C floats: for three masters
// 0-5460, 5461-10922 and 10923-16383).
func newTopology(ports []int) topology {
	t := make(topology, len(ports))
	perNode := float32(16384) / float32(len(ports))
	var cursor float32
	first := 0
	for i, p := range ports {
		last := int(math.Round(float64(cursor + perNode - 1)))
		if last > 16384 || i == len(ports)-1 {
			last = 16383
		}
		last = max(last, first)
		t[i] = node{id: fmt.Sprintf("%040x", i+1), port: p, start: first, end: last}
		first = last + 1
		cursor += perNode
	}
	return t
}

// replies are the pre-encoded answers of one server: everything except
// the MGET array header and the echo of PING's argument is built once.
type replies struct {
	get          []byte // GET's bulk string
	hello        [2][]byte
	shards       [2][]byte // CLUSTER SHARDS in RESP2 and RESP3
	slots        [2][]byte // CLUSTER SLOTS in RESP2 and RESP3
	nodes        [2][]byte // the text replies, in RESP2 and RESP3
	info         [2][]byte
	clusterInfo  [2][]byte
	myID         []byte
	clusterError []byte // every CLUSTER subcommand of a standalone server
	commands     [2]commandTable
}

func newReplies(value string, t topology, self int) *replies {
	r := &replies{get: bulk(nil, value), commands: commandTables}
	mode := "standalone"
	if len(t) > 0 {
		mode = "cluster"
	}
	for v := range 2 {
		proto := v + 2
		fields := []string{"server", "redis", "version", "7.0.15", "proto", strconv.Itoa(proto),
			"id", "1", "mode", mode, "role", "master"}
		b := mapHeader(nil, proto, len(fields)/2+1)
		for k := 0; k < len(fields); k += 2 {
			b = bulk(b, fields[k])
			if fields[k] == "proto" || fields[k] == "id" {
				b = append(b, ':')
				b = append(b, fields[k+1]...)
				b = append(b, "\r\n"...)
			} else {
				b = bulk(b, fields[k+1])
			}
		}
		b = bulk(b, "modules")
		b = append(b, "*0\r\n"...)
		r.hello[v] = b
		r.shards[v] = encodeShards(t, proto)
		r.info[v] = text(nil, proto, "# Server\r\nredis_version:7.0.15\r\nredis_mode:"+mode+"\r\n")
		if len(t) > 0 {
			r.slots[v] = encodeSlots(t, proto)
			r.nodes[v] = text(nil, proto, encodeNodes(t, self))
			r.clusterInfo[v] = text(nil, proto, fmt.Sprintf("cluster_enabled:1\r\ncluster_state:ok\r\n"+
				"cluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\n",
				len(t), len(t)))
		}
	}
	r.clusterError = []byte("-ERR This instance has cluster support disabled\r\n")
	if len(t) > 0 {
		r.myID = bulk(nil, t[self].id)
	}
	return r
}

// text encodes a text reply as redis-server does: a bulk string in RESP2,
// a verbatim string of format txt in RESP3.
func text(b []byte, proto int, s string) []byte {
	if proto == 2 {
		return bulk(b, s)
	}
	b = append(b, '=')
	b = strconv.AppendInt(b, int64(len(s)+4), 10)
	b = append(b, "\r\ntxt:"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

func bulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

func integer(b []byte, n int) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, "\r\n"...)
}

func arrayHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, "\r\n"...)
}

// mapHeader starts a map of n pairs: a RESP3 map, or a flat array of 2n
// elements in RESP2.
func mapHeader(b []byte, proto, n int) []byte {
	if proto == 3 {
		b = append(b, '%')
		b = strconv.AppendInt(b, int64(n), 10)
		return append(b, "\r\n"...)
	}
	return arrayHeader(b, 2*n)
}

// encodeShards encodes CLUSTER SHARDS as Redis 7.0 does: per shard a map
// of "slots" (flat start/end pairs) and "nodes" (a map per node).
func encodeShards(t topology, proto int) []byte {
	b := arrayHeader(nil, len(t))
	for _, n := range t {
		b = mapHeader(b, proto, 2)
		b = bulk(b, "slots")
		b = arrayHeader(b, 2)
		b = integer(b, n.start)
		b = integer(b, n.end)
		b = bulk(b, "nodes")
		b = arrayHeader(b, 1)
		b = mapHeader(b, proto, 7)
		b = bulk(b, "id")
		b = bulk(b, n.id)
		b = bulk(b, "port")
		b = integer(b, n.port)
		b = bulk(b, "ip")
		b = bulk(b, "127.0.0.1")
		b = bulk(b, "endpoint")
		b = bulk(b, "127.0.0.1")
		b = bulk(b, "role")
		b = bulk(b, "master")
		b = bulk(b, "replication-offset")
		b = integer(b, 0)
		b = bulk(b, "health")
		b = bulk(b, "online")
	}
	return b
}

// encodeSlots encodes CLUSTER SLOTS as Redis 7.0 does: per range start,
// end and the master as [ip, port, id, {}] (no hostname in the map of
// further addresses).
func encodeSlots(t topology, proto int) []byte {
	b := arrayHeader(nil, len(t))
	for _, n := range t {
		b = arrayHeader(b, 3)
		b = integer(b, n.start)
		b = integer(b, n.end)
		b = arrayHeader(b, 4)
		b = bulk(b, "127.0.0.1")
		b = integer(b, n.port)
		b = bulk(b, n.id)
		b = mapHeader(b, proto, 0)
	}
	return b
}

// encodeNodes writes CLUSTER NODES's text, one line per node.
func encodeNodes(t topology, self int) string {
	var sb strings.Builder
	for i, n := range t {
		flags := "master"
		if i == self {
			flags = "myself,master"
		}
		fmt.Fprintf(&sb, "%s 127.0.0.1:%d@%d %s - 0 0 %d connected %d-%d\n",
			n.id, n.port, n.port+10000, flags, i+1, n.start, n.end)
	}
	return sb.String()
}
