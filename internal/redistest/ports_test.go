package redistest

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePort(t *testing.T) {
	lo, hi := quietRange()
	seen := map[int]bool{}
	// The ports stay claimed until the end: a released port may come back
	// (with 50 random picks out of some 10,000 ports, one in ten runs would
	// see a repeat), a claimed one must not.
	defer func() {
		for p := range seen {
			release(p)
		}
	}()
	for range 50 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("FreePort returned %d twice while it was claimed", p)
		}
		seen[p] = true
		if p+busPortOffset > 65535 {
			t.Fatalf("port %d has no room for a cluster bus port", p)
		}
		if hi-lo >= 1000 && (p < lo || p >= hi) {
			t.Errorf("port %d outside the quiet range [%d, %d)", p, lo, hi)
		}
		for _, q := range []int{p, p + busPortOffset} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
			if err != nil {
				t.Fatalf("port %d from FreePort cannot be listened on: %v", q, err)
			}
			l.Close()
		}
	}
}

func TestFreePortSkipsBusyPorts(t *testing.T) {
	// Occupy the bus port of every candidate we can: hold listeners on a
	// set of ports, then check FreePort never returns p with p or p+10000
	// among them.
	var held []net.Listener
	busy := map[int]bool{}
	for range 20 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []int{p, p + busPortOffset} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, l)
			busy[q] = true
		}
		release(p) // FreePort may pick it again; it must see it is busy
	}
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range 200 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if busy[p] || busy[p+busPortOffset] {
			t.Fatalf("FreePort returned %d although it or its bus port is in use", p)
		}
		release(p)
	}
}
