package addrkey

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

// shares reports whether two lists of forms have one in common.
func shares(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// FuzzReview9Of checks Of on any input: it never panics; an address that
// splits into host and port has forms ending in "|port", one that does
// not has none; and every other spelling of the same host (an IP address
// written expanded, as an IPv4-mapped IPv6 address, a host name with its
// ASCII letters in upper case or with a final dot) shares a form with it.
func FuzzReview9Of(f *testing.F) {
	for _, s := range []string{"127.0.0.1:6379", "[::1]:6379", "[::ffff:10.0.0.1]:1", "0.0.0.0:1", "[::]:1",
		"localhost:1", "Redis-1.Example.:6379", "[fe80::1%eth0]:1", "no-port", "", ":", "[::1]", "a:b:c", "@:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		forms := Of(addr)
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			if forms != nil {
				t.Fatalf("Of(%q) = %q for an address that does not split", addr, forms)
			}
			return
		}
		if len(forms) == 0 {
			t.Fatalf("Of(%q) has no form", addr)
		}
		for _, k := range forms {
			if !strings.HasSuffix(k, "|"+port) {
				t.Fatalf("Of(%q) = %q: form %q does not end in |%s", addr, forms, k, port)
			}
		}
		var others []string
		if ip, err := netip.ParseAddr(host); err == nil {
			others = append(others, net.JoinHostPort(ip.StringExpanded(), port))
			if ip.Is4() {
				others = append(others, net.JoinHostPort(netip.AddrFrom16(ip.As16()).String(), port))
			}
			if ip.Is4In6() {
				others = append(others, net.JoinHostPort(ip.Unmap().String(), port))
			}
		} else if !strings.ContainsAny(host, ":%") { // a host name (with a ':' or '%' a dot may make it an IP address with a zone)
			// DNS names ignore the case of ASCII letters only.
			upper := strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' {
					return r - 'a' + 'A'
				}
				return r
			}, host)
			others = append(others, net.JoinHostPort(upper, port))
			if !strings.HasSuffix(host, ".") {
				others = append(others, net.JoinHostPort(host+".", port))
			}
		}
		for _, o := range others {
			if _, err := netip.ParseAddr(host); err != nil {
				if _, err2 := netip.ParseAddr(strings.TrimSuffix(strings.ToLower(o[:strings.LastIndexByte(o, ':')]), ".")); err2 == nil {
					continue // a case change made a host name an IP address
				}
			}
			if of := Of(o); !shares(forms, of) {
				t.Fatalf("Of(%q) = %q and Of(%q) = %q share no form", addr, forms, o, of)
			}
		}
		// A form is itself stable: the same address gives the same forms.
		if again := Of(addr); strings.Join(again, ",") != strings.Join(forms, ",") {
			t.Fatalf("Of(%q) = %q, then %q", addr, forms, again)
		}
	})
}
