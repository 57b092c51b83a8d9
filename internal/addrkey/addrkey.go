// Package addrkey tells whether two spellings of a host:port address name
// one server, without DNS lookups.
package addrkey

import (
	"net"
	"net/netip"
	"strings"
)

// Of returns the canonical forms of a host:port address; two addresses
// name one server when their forms share one. An IP address is taken by
// value (an IPv4-mapped IPv6 address as its IPv4 address, so "[0::1]" is
// "[::1]" and "[::ffff:10.0.0.1]" is "10.0.0.1"); the unspecified address
// ("0.0.0.0", "[::]") is also the loopback address of its family, where a
// connection to it goes; localhost is both loopback addresses; any other
// host name is compared in lower case without a final dot, and is not
// looked up. An address that does not split into host and port has no
// form (nil).
func Of(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
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
