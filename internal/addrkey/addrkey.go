// Package addrkey tells whether two spellings of a host:port address name
// one server: without DNS lookups (Of), or with cached ones (Lookup).
package addrkey

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// lookupNetIP resolves a host name; tests replace it (under cacheMu, as
// resolve reads it).
var lookupNetIP = net.DefaultResolver.LookupNetIP

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

// NeedsLookup reports whether host is a name that only a lookup ties to
// an address: not an IP address (zone or not), not localhost (Of knows
// it), not empty.
func NeedsLookup(host string) bool {
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")) != "localhost"
}

// Lookup returns Of(addr) and, when addr's host needs a lookup
// (NeedsLookup), the forms of each address the host resolves to, looked
// up within ctx. A name that does not resolve, or whose lookup has not
// ended within ctx, has its own forms only. Answers are kept a few
// seconds (lookupTTL, failedTTL): a name that moves to another address is
// seen to within that time.
func Lookup(ctx context.Context, addr string) []string {
	f, _ := lookup(ctx, addr)
	return f
}

// lookup is Lookup that also reports whether the forms are complete:
// false when addr's host needed a lookup that failed or did not end
// within ctx.
func lookup(ctx context.Context, addr string) ([]string, bool) {
	f := Of(addr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !NeedsLookup(host) {
		return f, true
	}
	ips, ok := resolve(ctx, host)
	if !ok {
		return f, false
	}
	for _, ip := range ips {
		f = append(f, Of(net.JoinHostPort(ip.String(), port))...)
	}
	return f, true
}

// Shares reports whether two lists of forms have one in common: the
// addresses they are the forms of name one server.
func Shares(a, b []string) bool {
	for _, k := range a {
		for _, l := range b {
			if k == l {
				return true
			}
		}
	}
	return false
}

// SameServerLookup reports whether host:port addresses a and b name one
// server, by their forms (Of) and, when they do not match so, one of
// them has a host name and both have one port, by the addresses the
// names resolve to (Lookup), looked up within ctx. Two ports are two
// servers without a lookup. A comparison whose answer is not known (a
// lookup failed or did not end, Compare's Unknown) is false.
func SameServerLookup(ctx context.Context, a, b string) bool {
	return Compare(ctx, a, b) == Same
}

// Match is the answer of Compare.
type Match int

const (
	// Different: the two addresses name two servers.
	Different Match = iota
	// Same: the two addresses name one server.
	Same
	// Unknown: a host name had to be looked up to tell, and its lookup
	// failed or did not end in time (it goes on in the background, and
	// its answer is kept for the next comparison).
	Unknown
)

// Compare tells whether host:port addresses a and b name one server, as
// SameServerLookup does, and Unknown when they do not match by their
// forms and a lookup needed to tell failed or did not end within ctx: a
// brief outage of the resolver is no evidence of two servers.
func Compare(ctx context.Context, a, b string) Match {
	if a == b || Shares(Of(a), Of(b)) {
		return Same
	}
	ha, pa, erra := net.SplitHostPort(a)
	hb, pb, errb := net.SplitHostPort(b)
	if erra != nil || errb != nil || pa != pb || (!NeedsLookup(ha) && !NeedsLookup(hb)) {
		return Different
	}
	fa, oka := lookup(ctx, a)
	fb, okb := lookup(ctx, b)
	switch {
	case Shares(fa, fb):
		return Same
	case oka && okb:
		return Different
	}
	return Unknown
}

// The answers of lookups are kept for a while: a Sentinel shard compares
// a replica's master with the announced one after each health check of
// the replica, and a query compares every Sentinel's answer, each time
// looking up the same few names. A name that resolves is kept for
// lookupTTL, one that does not (the resolver said so, or did not answer
// within lookupMax) for failedTTL. At most cacheMax names are kept.
//
// A lookup runs in the background, bounded by lookupMax rather than by
// its caller's context, and concurrent callers for one name wait for the
// same lookup: a caller whose context ends first (a health check's
// timeout shorter than the resolver's answer) goes without the answer,
// but the lookup goes on and its answer is kept for the next caller.
const (
	lookupTTL = 5 * time.Second
	failedTTL = time.Second
	lookupMax = 5 * time.Second
	cacheMax  = 256
)

// cached is a lookup's answer: ok false when the name did not resolve.
type cached struct {
	ips []netip.Addr
	ok  bool
	at  time.Time
}

func (e cached) fresh(now time.Time) bool {
	ttl := lookupTTL
	if !e.ok {
		ttl = failedTTL
	}
	d := now.Sub(e.at)
	return d >= 0 && d < ttl
}

// flight is a lookup in progress: e is set when done is closed.
type flight struct {
	done chan struct{}
	e    cached
}

var (
	clock    = time.Now // the cache's clock; tests replace it
	cacheMu  sync.Mutex
	cache    = map[string]cached{}  // by host name, in lower case without a final dot
	inflight = map[string]*flight{} // the lookups in progress, by the same key
	cacheGen uint64                 // counts resetCache: a lookup begun before one is not kept
)

// resetCache empties the cache and forgets the lookups in progress
// (tests): their answers are not kept.
func resetCache() {
	cacheMu.Lock()
	resetLocked()
	cacheMu.Unlock()
}

func resetLocked() {
	clear(cache)
	clear(inflight)
	cacheGen++
}

// resolve returns the addresses host resolves to, and false when it does
// not resolve or its lookup did not end within ctx: from the cache while
// its answer is fresh, otherwise from a lookup in the background, started
// or joined (one per name at a time).
func resolve(ctx context.Context, host string) ([]netip.Addr, bool) {
	key := strings.ToLower(strings.TrimSuffix(host, "."))
	cacheMu.Lock()
	if e, hit := cache[key]; hit && e.fresh(clock()) {
		cacheMu.Unlock()
		return e.ips, e.ok
	}
	f := inflight[key]
	if f == nil {
		f = &flight{done: make(chan struct{})}
		inflight[key] = f
		go runLookup(key, host, f, lookupNetIP, clock, cacheGen)
	}
	cacheMu.Unlock()
	select {
	case <-f.done:
		return f.e.ips, f.e.ok
	case <-ctx.Done():
		return nil, false // not known yet: the lookup goes on
	}
}

// runLookup looks host up within lookupMax, keeps the answer under key
// (unless the cache was reset since gen), and hands it to f's waiters.
func runLookup(key, host string, f *flight, lookupIP func(context.Context, string, string) ([]netip.Addr, error), now func() time.Time, gen uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupMax)
	defer cancel()
	ips, err := lookupIP(ctx, "ip", host)
	e := cached{ips: ips, ok: err == nil, at: now()}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	f.e = e
	close(f.done)
	if gen != cacheGen {
		return
	}
	delete(inflight, key)
	if _, ok := cache[key]; !ok && len(cache) >= cacheMax {
		t := now()
		for k, old := range cache {
			if !old.fresh(t) {
				delete(cache, k)
			}
		}
		if len(cache) >= cacheMax {
			clear(cache)
		}
	}
	cache[key] = e
}

// SetLookupForTest replaces the resolver that Lookup and SameServerLookup
// use with fn and empties the cache, for the tests of other packages (a
// resolver that fails, or is slow); restore puts the previous resolver
// back and empties the cache again. Only tests call it.
func SetLookupForTest(fn func(ctx context.Context, host string) ([]netip.Addr, error)) (restore func()) {
	cacheMu.Lock()
	old := lookupNetIP
	lookupNetIP = func(ctx context.Context, _, host string) ([]netip.Addr, error) { return fn(ctx, host) }
	resetLocked()
	cacheMu.Unlock()
	return func() {
		cacheMu.Lock()
		lookupNetIP = old
		resetLocked()
		cacheMu.Unlock()
	}
}
