//go:build unix

package shard

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
)

// bigTopology describes a simulated cluster: masters × replicas nodes on
// 127.0.0.1, master 0 at seed, every other node at a port where nothing
// listens (fakeNodePorts; health checks and periodic refreshes are off in
// the simulations). owner[slot] is the master of each slot.
type bigTopology struct {
	masters, replicas int
	seed              string
	owner             []int
}

// newBigTopology spreads the slots over the masters in equal ranges.
func newBigTopology(masters, replicas int, seed string) *bigTopology {
	t := &bigTopology{masters: masters, replicas: replicas, seed: seed, owner: make([]int, cluster.SlotCount)}
	for s := range t.owner {
		t.owner[s] = s * masters / cluster.SlotCount
	}
	return t
}

// addr returns the address of replica r of master m (r = -1: the master).
func (t *bigTopology) addr(m, r int) string {
	if m == 0 && r < 0 {
		return t.seed
	}
	return "127.0.0.1:" + strconv.Itoa(fakeNodePorts+m*(t.replicas+1)+r+1)
}

// fakeNodePorts is the first of the ports given to the nodes that no
// server backs. A refresh may dial them (it asks the next node when the
// seed is slow to answer), so they lie above the kernel's ephemeral range
// (32768-60999 on Linux) and above the range redistest.FreePort gives the
// test servers (below it): a port there that answered, a test server of
// this package, once handed the client a foreign topology.
const fakeNodePorts = 62000

// ranges returns master m's slots as start/end pairs.
func (t *bigTopology) ranges(m int) []int {
	var out []int
	for s := 0; s < len(t.owner); s++ {
		if t.owner[s] != m {
			continue
		}
		e := s
		for e+1 < len(t.owner) && t.owner[e+1] == m {
			e++
		}
		out = append(out, s, e)
		s = e
	}
	return out
}

// reply returns the CLUSTER SHARDS reply as redigo decodes it: bulk
// strings as []byte, integers as int64, maps as flat arrays.
func (t *bigTopology) reply() []any {
	out := make([]any, 0, t.masters)
	for m := range t.masters {
		var slots []any
		for _, s := range t.ranges(m) {
			slots = append(slots, int64(s))
		}
		nodes := []any{t.nodeMap(m, -1)}
		for r := range t.replicas {
			nodes = append(nodes, t.nodeMap(m, r))
		}
		out = append(out, []any{[]byte("slots"), slots, []byte("nodes"), nodes})
	}
	return out
}

func (t *bigTopology) nodeMap(m, r int) []any {
	host, port, _ := net.SplitHostPort(t.addr(m, r))
	p, _ := strconv.Atoi(port)
	role := "master"
	if r >= 0 {
		role = "replica"
	}
	return []any{
		[]byte("id"), []byte(fmt.Sprintf("%040x", m*(t.replicas+1)+r+1)),
		[]byte("port"), int64(p),
		[]byte("ip"), []byte(host),
		[]byte("endpoint"), []byte(host),
		[]byte("role"), []byte(role),
		[]byte("replication-offset"), int64(12345),
		[]byte("health"), []byte("online"),
	}
}

// encode writes v as RESP2.
func encode(b []byte, v any) []byte {
	switch x := v.(type) {
	case []any:
		b = append(b, '*')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, "\r\n"...)
		for _, e := range x {
			b = encode(b, e)
		}
	case []byte:
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, "\r\n"...)
		b = append(b, x...)
		b = append(b, "\r\n"...)
	case int64:
		b = append(b, ':')
		b = strconv.AppendInt(b, x, 10)
		b = append(b, "\r\n"...)
	}
	return b
}

// topologyServer answers CLUSTER SHARDS with a pre-encoded reply (which
// can be swapped), PING with PONG and anything else with OK: the seed of
// a simulated cluster. It counts the CLUSTER SHARDS it answered.
type topologyServer struct {
	ln      net.Listener
	reply   atomic.Pointer[[]byte]
	queries atomic.Int64
	// hold, when set, is taken by the next CLUSTER SHARDS query: its
	// answer (the topology of that moment) is written only once the
	// channel is closed, as a slow node's late, stale answer.
	hold atomic.Pointer[chan struct{}]
	wg   sync.WaitGroup
}

func startTopologyServer(tb testing.TB) *topologyServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &topologyServer{ln: ln}
	empty := []byte("*0\r\n")
	s.reply.Store(&empty)
	s.wg.Go(func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			s.wg.Go(func() { s.serve(c) })
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *topologyServer) addr() string { return s.ln.Addr().String() }

func (s *topologyServer) set(t *bigTopology) {
	b := encode(nil, t.reply())
	s.reply.Store(&b)
}

// serve answers RESP commands; it needs only the command's words, so it
// looks for the keywords in what arrived.
func (s *topologyServer) serve(c net.Conn) {
	serveCommands(c, func(cmd []byte) []byte {
		switch {
		case bytes.Contains(bytes.ToUpper(cmd), []byte("SHARDS")):
			out := *s.reply.Load()
			s.queries.Add(1)
			if h := s.hold.Swap(nil); h != nil {
				<-*h
			}
			return out
		case bytes.Contains(bytes.ToUpper(cmd), []byte("PING")):
			return []byte("+PONG\r\n")
		default:
			return []byte("+OK\r\n")
		}
	})
}

// serveCommands reads RESP commands from c (one RESP array each) and
// writes answer's reply to each, in order, until c fails; then it closes
// c.
func serveCommands(c net.Conn, answer func(cmd []byte) []byte) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	var pending []byte
	for {
		n, err := c.Read(buf)
		pending = append(pending, buf[:n]...)
		for {
			cmd, rest, ok := splitCommand(pending)
			if !ok {
				break
			}
			pending = rest
			if _, err := c.Write(answer(cmd)); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// splitCommand cuts one RESP array of bulk strings off the front of b.
func splitCommand(b []byte) (cmd, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '*' {
		return nil, b, false
	}
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, b, false
	}
	n, err := strconv.Atoi(string(b[1:i]))
	if err != nil {
		return nil, b, false
	}
	pos := i + 2
	for range n {
		j := bytes.Index(b[pos:], []byte("\r\n"))
		if j < 0 || b[pos] != '$' {
			return nil, b, false
		}
		size, err := strconv.Atoi(string(b[pos+1 : pos+j]))
		if err != nil {
			return nil, b, false
		}
		pos += j + 2 + size + 2
		if pos > len(b) {
			return nil, b, false
		}
	}
	return b[:pos], b[pos:], true
}

// processCPU returns the CPU time (user plus system) this process has
// used so far: on a loaded machine a steadier measure of work than
// elapsed time, which also counts the wait for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter reports cpu-ms/op for the loop it brackets.
type cpuMeter time.Duration

func startCPU() cpuMeter { return cpuMeter(processCPU()) }

func (m cpuMeter) report(b *testing.B) {
	if d := processCPU() - time.Duration(m); m > 0 && b.N > 0 {
		b.ReportMetric(float64(d.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	}
}
