package redistest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// busPortOffset is the distance from a cluster node's client port to its
// cluster bus port (Redis' default, set explicitly with cluster-port).
const busPortOffset = 10000

// Ports below lowestPort are left alone; many well-known services live
// there.
const lowestPort = 10000

// handedOut remembers the ports FreePort returned recently, so that two
// servers started at the same time in one process never get the same one.
var handedOut = struct {
	sync.Mutex
	until map[int]time.Time
}{until: make(map[int]time.Time)}

// reserveFor is how long FreePort will not return a port again. A server
// that got the port keeps it reserved until it is stopped.
const reserveFor = 2 * time.Minute

// FreePort returns a loopback TCP port on which 127.0.0.1 can listen, and
// whose cluster bus port (port+10000) is free too.
//
// Ports come from below the kernel's ephemeral range (on Linux read from
// /proc/sys/net/ipv4/ip_local_port_range), so that outgoing connections,
// which take their local port from that range, cannot grab a port between
// the moment it is chosen and the moment redis-server binds it. Each
// candidate is checked by listening on it and on port+10000 and closing
// both. Where that range is too small, the kernel picks the port
// (127.0.0.1:0). A port is never returned twice within a couple of minutes
// by one process. A race with another process remains possible, which is
// why Start retries on another port when redis-server cannot bind.
func FreePort() (int, error) {
	lo, hi := quietRange()
	for attempt := 0; attempt < 200; attempt++ {
		var port int
		if hi-lo >= 1000 {
			port = lo + rand.IntN(hi-lo)
		} else {
			p, err := kernelPort()
			if err != nil {
				return 0, err
			}
			port = p
		}
		if port+busPortOffset > 65535 || !claim(port) {
			continue
		}
		if listenable(port) && listenable(port+busPortOffset) {
			return port, nil
		}
		release(port)
	}
	return 0, fmt.Errorf("shardis: no free loopback port pair (p, p+%d) found after 200 attempts", busPortOffset)
}

// quietRange returns [lo, hi): ports p such that p and p+10000 lie below
// the ephemeral range.
func quietRange() (lo, hi int) {
	ephemeralLow := 32768
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 0 {
				ephemeralLow = n
			}
		}
	}
	return lowestPort, ephemeralLow - busPortOffset
}

func kernelPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("shardis: listen on 127.0.0.1:0: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func listenable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// claim marks port as handed out, or reports false when it already is.
func claim(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	now := time.Now()
	for p, t := range handedOut.until {
		if now.After(t) {
			delete(handedOut.until, p)
		}
	}
	if _, taken := handedOut.until[port]; taken {
		return false
	}
	handedOut.until[port] = now.Add(reserveFor)
	return true
}

// hold keeps port reserved until release.
func hold(port int) {
	handedOut.Lock()
	defer handedOut.Unlock()
	handedOut.until[port] = time.Now().Add(100 * 365 * 24 * time.Hour)
}

// release makes port available to FreePort again.
func release(port int) {
	handedOut.Lock()
	defer handedOut.Unlock()
	delete(handedOut.until, port)
}
