package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

const testValue = "0123456789abcdef"

// startServers starts n in-process servers on loopback ports, as a
// cluster when clustered, and returns their addresses.
func startServers(t testing.TB, n int, clustered bool) []string {
	t.Helper()
	lns := make([]net.Listener, n)
	ports := make([]int, n)
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], ports[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	var topo topology
	if clustered {
		topo = newTopology(ports)
	}
	addrs := make([]string, n)
	for i, ln := range lns {
		srv := newServer(newReplies(testValue, topo, i))
		done := make(chan error, 1)
		go func() { done <- srv.serve(ln) }()
		t.Cleanup(func() {
			ln.Close()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		addrs[i] = ln.Addr().String()
	}
	return addrs
}

func TestRedigoReplies(t *testing.T) {
	addrs := startServers(t, 1, false)
	c, err := redis.Dial("tcp", addrs[0], redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tests := []struct {
		cmd  string
		args []any
		want any
	}{
		{"PING", nil, "PONG"},
		{"PING", []any{"hi"}, []byte("hi")},
		{"SET", []any{"k", "v"}, "OK"},
		{"GET", []any{"k"}, []byte(testValue)},
		{"MGET", []any{"a", "b", "c"}, []any{[]byte(testValue), []byte(testValue), []byte(testValue)}},
		{"DEL", []any{"a", "b"}, int64(2)},
		{"SELECT", []any{0}, "OK"},
		{"GET", nil, redis.Error("ERR wrong number of arguments for 'get' command")},
		{"NOSUCH", nil, redis.Error("ERR unknown command 'NOSUCH'")},
		{"CLUSTER", []any{"SHARDS"}, redis.Error("ERR This instance has cluster support disabled")},
	}
	for _, tc := range tests {
		got, err := c.Do(tc.cmd, tc.args...)
		if e, ok := tc.want.(redis.Error); ok {
			if err == nil || err.Error() != string(e) {
				t.Errorf("%s %v: err = %v, want %q", tc.cmd, tc.args, err, e)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v: %v", tc.cmd, tc.args, err)
			continue
		}
		if !equal(got, tc.want) {
			t.Errorf("%s %v = %#v, want %#v", tc.cmd, tc.args, got, tc.want)
		}
	}
	// A pipeline of many commands in one write gets every reply, in order.
	for i := range 5000 {
		if err := c.Send("SET", i, "x"); err != nil {
			t.Fatal(err)
		}
		if err := c.Send("GET", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		if r, err := redis.String(c.Receive()); err != nil || r != "OK" {
			t.Fatalf("SET %d: %q, %v", i, r, err)
		}
		if r, err := redis.String(c.Receive()); err != nil || r != testValue {
			t.Fatalf("GET %d: %q, %v", i, r, err)
		}
	}
}

func TestHello(t *testing.T) {
	addrs := startServers(t, 1, true)
	c, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("HELLO 3\r\nCLUSTER SHARDS\r\nHELLO 4\r\n")); err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("NOPROTO")) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, buf[:n]...)
	}
	for _, want := range []string{"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n", "$5\r\nproto\r\n:3\r\n", "$4\r\nmode\r\n$7\r\ncluster\r\n",
		"*1\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n", "-NOPROTO"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("reply %q lacks %q", got, want)
		}
	}
}

func TestProtocolErrorClosesConnection(t *testing.T) {
	addrs := startServers(t, 1, false)
	c, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("*1\r\n:1\r\n")); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := got.ReadFrom(c); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.String(), "-ERR fakeredis: protocol error") {
		t.Fatalf("reply %q", got.String())
	}
}

func TestShardisRing(t *testing.T) {
	addrs := startServers(t, 3, false)
	var shards []ring.Shard
	for i, a := range addrs {
		shards = append(shards, ring.Shard{Name: "s" + string(rune('1'+i)), Addr: a, Weight: 1})
	}
	ctx := context.Background()
	c, err := shard.New(ctx, shard.Config{Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkShardis(t, c)
}

func TestShardisCluster(t *testing.T) {
	addrs := startServers(t, 3, true)
	ctx := context.Background()
	c, err := shard.New(ctx, shard.Config{Mode: shard.ModeCluster, Seeds: addrs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cr, ok := c.Router().(*shard.ClusterRouter)
	if !ok {
		t.Fatalf("router is %T", c.Router())
	}
	tb := cr.Table()
	masters := tb.Masters()
	if len(masters) != 3 {
		t.Fatalf("discovered %d masters, want 3: %v", len(masters), tb)
	}
	// redis-cli's ranges: 0-5460, 5461-10922, 10923-16383.
	for i, slots := range [][2]int{{0, 5460}, {5461, 10922}, {10923, cluster.SlotCount - 1}} {
		for _, slot := range slots {
			if got := tb.Master(slot).Addr; got != addrs[i] {
				t.Errorf("master of slot %d is %s, want %s", slot, got, addrs[i])
			}
		}
	}
	checkShardis(t, c)
}

// checkShardis runs single commands, a pipeline and a split MGET.
func checkShardis(t *testing.T, c *shard.Client) {
	t.Helper()
	ctx := context.Background()
	if r, err := redis.String(c.Do(ctx, "SET", "k", "v")); err != nil || r != "OK" {
		t.Fatalf("SET: %q, %v", r, err)
	}
	if r, err := redis.String(c.Do(ctx, "GET", "k")); err != nil || r != testValue {
		t.Fatalf("GET: %q, %v", r, err)
	}
	p := c.Pipeline()
	for i := range 300 {
		p.Send("SET", i, "x")
		p.Send("GET", i)
	}
	res, err := p.Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 600 {
		t.Fatalf("%d results, want 600", len(res))
	}
	for i, r := range res {
		want := any("OK")
		if i%2 == 1 {
			want = []byte(testValue)
		}
		if r.Err != nil || !equal(r.Reply, want) {
			t.Fatalf("result %d: %#v, %v", i, r.Reply, r.Err)
		}
	}
	keys := make([]any, 100)
	for i := range keys {
		keys[i] = "mget:" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	vals, err := redis.Strings(c.Do(ctx, "MGET", keys...))
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != len(keys) {
		t.Fatalf("MGET: %d values for %d keys", len(vals), len(keys))
	}
	for i, v := range vals {
		if v != testValue {
			t.Fatalf("MGET value %d = %q", i, v)
		}
	}
}

func equal(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		argv  []string
		ok    bool
		ports []int
		self  []int
	}{
		{[]string{"-port", "7001"}, true, []int{7001}, nil},
		{[]string{"-port", "7002", "-cluster", "7001,7002,7003"}, true, []int{7002}, []int{1}},
		{[]string{"-port", "7003,7001", "-cluster", "7001,7002,7003"}, true, []int{7003, 7001}, []int{2, 0}},
		{[]string{"-port", "7001,7002"}, true, []int{7001, 7002}, nil},
		{[]string{"-port", "0"}, false, nil, nil},
		{[]string{}, false, nil, nil},
		{[]string{"-port", "7001,7001"}, false, nil, nil},
		{[]string{"-port", "7001,"}, false, nil, nil},
		{[]string{"-port", "7004", "-cluster", "7001,7002"}, false, nil, nil},
		{[]string{"-port", "7001,7004", "-cluster", "7001,7002"}, false, nil, nil},
		{[]string{"-port", "7001", "-cluster", "7001,x"}, false, nil, nil},
	}
	for _, tc := range tests {
		cfg, err := parseFlags(tc.argv)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err = %v", tc.argv, err)
			continue
		}
		if tc.ok && (!slices.Equal(cfg.ports, tc.ports) || !slices.Equal(cfg.self, tc.self)) {
			t.Errorf("%q: ports %v self %v, want %v %v", tc.argv, cfg.ports, cfg.self, tc.ports, tc.self)
		}
	}
}

// TestRunServesEveryPort runs the command as a process would: one
// process serving three cluster nodes, each answering CLUSTER MYID with
// its own ID, until its standard input ends.
func TestRunServesEveryPort(t *testing.T) {
	ports := make([]int, 3)
	list := make([]string, 3)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		list[i] = strconv.Itoa(ports[i])
		ln.Close()
	}
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		// The ports served in another order than the cluster lists them.
		done <- run([]string{"-port", list[2] + "," + list[0] + "," + list[1], "-cluster", strings.Join(list, ",")}, stdinR, stdoutW)
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	go io.Copy(io.Discard, stdoutR)
	for i, p := range ports {
		c, err := redis.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), redis.DialReadTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		id, err := redis.String(c.Do("CLUSTER", "MYID"))
		c.Close()
		if want := fmt.Sprintf("%040x", i+1); err != nil || id != want {
			t.Errorf("port %d: CLUSTER MYID = %q, %v; want %q", p, id, err, want)
		}
	}
	stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its standard input ended")
	}
	for _, p := range ports {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), time.Second); err == nil {
			c.Close()
			t.Errorf("port %d still accepts connections after run returned", p)
		}
	}
}

func TestCommandReplies(t *testing.T) {
	if commandTablesErr != nil {
		t.Fatal(commandTablesErr)
	}
	addrs := startServers(t, 1, false)
	c, err := redis.Dial("tcp", addrs[0], redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := redis.Values(c.Do("COMMAND", "INFO", "GET", "nosuch", "mget"))
	if err != nil {
		t.Fatal(err)
	}
	if len(info) != 3 {
		t.Fatalf("COMMAND INFO of 3 names: %d entries", len(info))
	}
	if info[1] != nil {
		t.Errorf("COMMAND INFO nosuch = %#v, want nil", info[1])
	}
	// The first six fields of Redis 7.0's entries: name, arity, flags,
	// first key, last key, step.
	for i, want := range []struct {
		name              string
		arity             int64
		flags             []string
		first, last, step int64
	}{
		0: {"get", 2, []string{"readonly", "fast"}, 1, 1, 1},
		2: {"mget", -2, []string{"readonly", "fast"}, 1, -1, 1},
	} {
		if want.name == "" {
			continue
		}
		e, err := redis.Values(info[i], nil)
		if err != nil || len(e) != 10 {
			t.Fatalf("entry %d: %d fields, %v", i, len(e), err)
		}
		name, _ := redis.String(e[0], nil)
		flags, _ := redis.Strings(e[2], nil)
		if name != want.name || e[1] != want.arity || !equal(toAny(flags), toAny(want.flags)) ||
			e[3] != want.first || e[4] != want.last || e[5] != want.step {
			t.Errorf("entry %d = %q %v %v %v %v %v, want %+v", i, name, e[1], flags, e[3], e[4], e[5], want)
		}
	}
	if n, err := redis.Int(c.Do("COMMAND", "COUNT")); err != nil || n != 22 {
		t.Errorf("COMMAND COUNT = %d, %v; want 22", n, err)
	}
	all, err := redis.Values(c.Do("COMMAND"))
	if err != nil || len(all) != 22 {
		t.Errorf("COMMAND: %d entries, %v; want 22", len(all), err)
	}
	if _, err := c.Do("COMMAND", "FOO"); err == nil || err.Error() != "ERR unknown subcommand 'FOO'. Try COMMAND HELP." {
		t.Errorf("COMMAND FOO: %v", err)
	}
	// RESP3: the same entry with sets and maps, and null for a name it
	// does not know.
	raw, err := net.Dial("tcp", addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := raw.Write([]byte("HELLO 3\r\nCOMMAND INFO get nosuch\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte("+PONG\r\n")) {
		n, err := raw.Read(buf)
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, buf[:n]...)
	}
	for _, want := range []string{"*2\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n", "\r\n_\r\n+PONG\r\n"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("RESP3 reply %q lacks %q", got, want)
		}
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func TestValueEndRejectsBrokenValues(t *testing.T) {
	for _, b := range []string{"", "*2\r\n:1\r\n", "$5\r\nabc\r\n", "%1\r\n+a\r\n", "?x\r\n", "*x\r\n", ":1"} {
		if end, err := valueEnd([]byte(b), 0); err == nil {
			t.Errorf("valueEnd(%q) = %d, want an error", b, end)
		}
	}
	for _, b := range []string{"*2\r\n:1\r\n$-1\r\n", "%1\r\n+a\r\n~1\r\n_\r\n", "$3\r\na\r\n\r\n"} {
		if end, err := valueEnd([]byte(b), 0); err != nil || end != len(b) {
			t.Errorf("valueEnd(%q) = %d, %v; want %d", b, end, err, len(b))
		}
	}
}
