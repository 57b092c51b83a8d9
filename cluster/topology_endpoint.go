package cluster

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The preferred endpoint of a node (what CLUSTER SHARDS calls "endpoint",
// the first element of a CLUSTER SLOTS node entry, and the host of MOVED
// and ASK) follows cluster-preferred-endpoint-type:
//
//   - an IP address or a hostname: dial it;
//   - "" (or null in CLUSTER SLOTS): the node does not know its own IP, or
//     the cluster uses unknown-endpoint; dial the host the command was
//     sent to, with the port from the reply;
//   - "?": the hostname type is preferred but the node has none (a
//     misconfiguration: cluster-preferred-endpoint-type hostname without
//     cluster-announce-hostname); dial its IP when the reply gives one.
//     An ip field that is present but empty is what a node that does not
//     know its own IP (a cluster of one node) says of itself; when the
//     node's port is the port the command was sent to, it is the node
//     that answered, so dial the host the command was sent to. Otherwise
//     (no ip field, or another port) the node cannot be reached.
const unknownEndpoint = "?"

// hostOf returns the host part of asked ("127.0.0.1:7000" -> "127.0.0.1",
// "[::1]:7000" -> "::1"); asked without a port is taken as a host. It
// returns "" when there is no usable host (brackets or spaces left in it).
func hostOf(asked string) string {
	host, _, err := net.SplitHostPort(asked)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(asked, "["), "]")
	}
	if strings.ContainsFunc(host, func(r rune) bool { return r == '[' || r == ']' || r <= ' ' || r == 0x7f }) {
		return ""
	}
	return host
}

// resolveHost applies the endpoint rules: endpoint is the preferred
// endpoint (null counts as ""), ip the node's IP, hasIP whether the reply
// has an ip field at all, port the node's port in the reply and asked the
// address the command was sent to. It returns "" when the node cannot be
// reached.
func resolveHost(endpoint, ip string, hasIP bool, port int, asked string) string {
	askedHost := hostOf(asked)
	switch endpoint {
	case "":
		if askedHost != "" {
			return askedHost
		}
		if ip == unknownEndpoint {
			return ""
		}
		return ip
	case unknownEndpoint:
		switch {
		case ip == unknownEndpoint:
			return ""
		case ip == "" && hasIP && askedPort(asked) == port:
			return askedHost
		}
		return ip
	}
	return endpoint
}

// askedPort returns the port of asked, 0 when it has none.
func askedPort(asked string) int {
	_, p, err := net.SplitHostPort(asked)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0
	}
	return n
}

// noAddressError is the bare reason (without ErrMalformed) for the master
// at node index k that has no usable address; with the endpoint "?" it
// wraps ErrNoHostname, which names the misconfiguration.
func noAddressError(k int, endpoint, ip string) error {
	if endpoint == unknownEndpoint {
		return fmt.Errorf("node %d: master has no usable address (endpoint %q, ip %q): %w", k, endpoint, ip, ErrNoHostname)
	}
	return fmt.Errorf("node %d: master has no usable address (endpoint %q, ip %q)", k, endpoint, ip)
}

// joinAddr builds a host:port address, with brackets around IPv6 hosts.
func joinAddr(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
