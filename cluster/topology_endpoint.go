package cluster

import (
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
//   - "?": the hostname type is preferred but the node has none; dial its
//     IP when the reply gives one, otherwise the node cannot be reached.
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
// endpoint (null counts as ""), ip the node's IP when the reply gives it.
// It returns "" when the node cannot be reached.
func resolveHost(endpoint, ip, askedHost string) string {
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
		if ip == unknownEndpoint {
			return ""
		}
		return ip
	}
	return endpoint
}

// joinAddr builds a host:port address, with brackets around IPv6 hosts.
func joinAddr(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
