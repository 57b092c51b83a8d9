// Package addrkey tells whether two spellings of a host:port address name
// one server, without DNS lookups.
package addrkey

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Of returns the canonical forms of a host:port address; two addresses
// name one server when their forms share one. An IP address is taken by
// value (an IPv4-mapped IPv6 address as its IPv4 address, so "[0::1]" is
// "[::1]" and "[::ffff:10.0.0.1]" is "10.0.0.1"); the unspecified address
// ("0.0.0.0", "[::]") is also the loopback address of its family, where a
// connection to it goes; localhost is both loopback addresses; any other
// host name is compared in lower case without a final dot, and is not
// looked up. An IPv6 zone is taken as a dial takes it: on an address
// that needs none (loopback, global) it is dropped, as the dial ignores
// it, and on one that does (link-local) an interface's name is its index
// ("[fe80::1%lo]" is "[fe80::1%1]" where lo is interface 1; the local
// interface table is read, nothing is sent). An address that does not
// split into host and port has no form (nil).
func Of(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = canonicalZone(ip.Unmap())
		switch {
		case ip.IsUnspecified() && ip.Is4():
			return []string{ip.String() + "|" + port, "127.0.0.1|" + port}
		case ip.IsUnspecified():
			return []string{ip.String() + "|" + port, "::1|" + port}
		}
		return []string{ip.String() + "|" + port}
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" {
		return []string{"127.0.0.1|" + port, "::1|" + port}
	}
	return []string{host + "|" + port}
}

// canonicalZone returns ip with its zone as a dial uses it: none when
// the address is not scoped to a link (the kernel ignores it), the
// interface's index when the zone names one by name (as package net
// looks the name up, first), a decimal index without leading zeros, and
// a zone that is neither as it is written (no dial can use it).
func canonicalZone(ip netip.Addr) netip.Addr {
	zone := ip.Zone()
	if zone == "" {
		return ip
	}
	if !ip.IsLinkLocalUnicast() && !ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() {
		return ip.WithZone("")
	}
	if ifc, err := net.InterfaceByName(zone); err == nil {
		return ip.WithZone(strconv.Itoa(ifc.Index))
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return ip.WithZone(strconv.FormatUint(n, 10))
	}
	return ip
}

// Redact hides what comes before the last '@' in s, the place of
// credentials in "user:password@host:port": an address or a list entry
// quoted in an error passes through it first. Text without '@' is
// returned as it is.
func Redact(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		return "xxxxx" + s[i:]
	}
	return s
}

// HasCredentials reports an address with an '@' in it, which no host name
// or IP address holds: credentials pasted from a URL's userinfo.
func HasCredentials(addr string) bool { return strings.IndexByte(addr, '@') >= 0 }
