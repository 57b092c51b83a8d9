package addrkey

import (
	"net"
	"strconv"
	"testing"
)

// TestReview11ZoneSpellings: an IPv6 zone may be written as the
// interface's name or its index ("[fe80::1%lo]" and "[fe80::1%1]"), and
// a dial goes to the same interface either way; on an address that
// needs no zone (loopback, global) the zone is ignored by the dial
// ("[::1%lo]" is "[::1]"). Of took each spelling for a server of its
// own, so one server listed both ways was two shards (two nodes of a
// Router). Two interfaces stay two servers.
func TestReview11ZoneSpellings(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		t.Skipf("no interfaces to name zones by: %v", err)
	}
	lo := ifs[0]
	index := strconv.Itoa(lo.Index)
	same := [][2]string{
		{"[fe80::1%" + lo.Name + "]:6379", "[fe80::1%" + index + "]:6379"},
		{"[fe80::1%" + lo.Name + "]:6379", "[fe80::1%0" + index + "]:6379"}, // a dial reads the index as a number
		{"[FE80::1%" + lo.Name + "]:6379", "[fe80:0::1%" + index + "]:6379"},
		{"[ff02::1%" + lo.Name + "]:6379", "[ff02::1%" + index + "]:6379"}, // link-local multicast: scoped too
		{"[::1%" + lo.Name + "]:6379", "[::1]:6379"},
		{"[::1%" + index + "]:6379", "[::1]:6379"},
		{"[2001:db8::1%" + lo.Name + "]:6379", "[2001:db8::1]:6379"},
	}
	for _, p := range same {
		a, b := Of(p[0]), Of(p[1])
		if len(a) == 0 || len(b) == 0 || !shares(a, b) {
			t.Errorf("Of(%q) = %q and Of(%q) = %q: want one server", p[0], a, p[1], b)
		}
	}
	different := [][2]string{
		{"[fe80::1%" + lo.Name + "]:6379", "[fe80::1]:6379"}, // a link-local address without a zone does not dial
		{"[fe80::1%" + lo.Name + "]:6379", "[fe80::2%" + lo.Name + "]:6379"},
		{"[fe80::1%" + lo.Name + "]:6379", "[fe80::1%" + index + "]:6380"},
	}
	if len(ifs) > 1 {
		other := ifs[1]
		different = append(different,
			[2]string{"[fe80::1%" + lo.Name + "]:6379", "[fe80::1%" + other.Name + "]:6379"},
			[2]string{"[fe80::1%" + index + "]:6379", "[fe80::1%" + strconv.Itoa(other.Index) + "]:6379"})
	}
	for _, p := range different {
		if a, b := Of(p[0]), Of(p[1]); shares(a, b) {
			t.Errorf("Of(%q) = %q and Of(%q) = %q: want two servers", p[0], a, p[1], b)
		}
	}
	// A name no interface has is kept as written (such an address does
	// not dial); it is not taken for another one.
	if a, b := Of("[fe80::1%no-such-if]:1"), Of("[fe80::1%0]:1"); len(a) == 0 || shares(a, b) {
		t.Errorf("Of of an unknown zone = %q, of zone 0 %q", a, b)
	}
}
