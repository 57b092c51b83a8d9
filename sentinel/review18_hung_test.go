package sentinel_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// namingThenHungSentinel listens on 127.0.0.1 and answers
// GET-MASTER-ADDR-BY-NAME with named (host:port), and nothing else: a
// Sentinel that hangs after naming its master, on SENTINEL MASTER.
func namingThenHungSentinel(t *testing.T, named string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(named)
	if err != nil {
		t.Fatal(err)
	}
	reply := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(host), host, len(port), port)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	serve := func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			args, err := readCommand(r)
			if err != nil {
				return
			}
			if len(args) < 2 || !strings.EqualFold(args[1], "GET-MASTER-ADDR-BY-NAME") {
				continue // never answered
			}
			if _, err := c.Write([]byte(reply)); err != nil {
				return
			}
		}
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("not an array: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, 0, n)
	for range n {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil {
			return nil, err
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args = append(args, string(buf[:size]))
	}
	return args, nil
}

// rankReplicas is a RankedMasterAddr check: ROLE says the server is a
// master, ranked by the replicas it lists.
func rankReplicas(ctx context.Context, addr string) (int, error) {
	conn, err := redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(5*time.Second), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	role, err := sentinel.CheckRole(ctx, conn)
	if err != nil {
		return 0, err
	}
	if role.Kind != sentinel.RoleMaster {
		return 0, fmt.Errorf("%s is a %s", addr, role.Kind)
	}
	return len(role.Replicas), nil
}

// The caller's deadline bounds MasterAddr, VerifiedMasterAddr and
// RankedMasterAddr when some Sentinels accept connections but never
// answer (next to real ones that do), with Sentinel timeouts far longer
// than the deadline; without a deadline, ReadTimeout bounds them. So
// does it when a Sentinel names its master and then hangs on SENTINEL
// MASTER, asked to break a tie.
func TestReview18SentinelHungSentinelsBoundedByDeadline(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 2})
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	name := set.Names()[0]
	stale := redistest.StartTB(t, redistest.Options{})
	s := set.Sentinels
	long := sentinel.Options{DialTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second}
	short := sentinel.Options{DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}
	const deadline = 500 * time.Millisecond
	const bound = 5 * time.Second // the deadline, or the timeouts, with room for a loaded machine

	majorityHung := []string{hungSentinel(t), s[0].Addr, hungSentinel(t), s[1].Addr, hungSentinel(t)}
	tie := []string{s[0].Addr, namingThenHungSentinel(t, stale.Addr), hungSentinel(t)}
	calls := []struct {
		name string
		call func(ctx context.Context, c *sentinel.Client) (string, string, error)
	}{
		{"MasterAddr", func(ctx context.Context, c *sentinel.Client) (string, string, error) { return c.MasterAddr(ctx) }},
		{"VerifiedMasterAddr", func(ctx context.Context, c *sentinel.Client) (string, string, error) {
			return c.VerifiedMasterAddr(ctx, roleMaster)
		}},
		{"RankedMasterAddr", func(ctx context.Context, c *sentinel.Client) (string, string, error) {
			return c.RankedMasterAddr(ctx, rankReplicas)
		}},
	}
	for _, set := range []struct {
		name  string
		addrs []string
	}{{"three of five hung", majorityHung}, {"tie with one hung on SENTINEL MASTER", tie}} {
		for _, call := range calls {
			for _, timeouts := range []struct {
				name     string
				opts     sentinel.Options
				deadline time.Duration
			}{{"deadline", long, deadline}, {"ReadTimeout", short, 0}} {
				t.Run(set.name+"/"+call.name+"/"+timeouts.name, func(t *testing.T) {
					c, err := sentinel.New(name, set.addrs, timeouts.opts)
					if err != nil {
						t.Fatal(err)
					}
					ctx := context.Background()
					if timeouts.deadline > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, timeouts.deadline)
						defer cancel()
					}
					start := time.Now()
					got, from, err := call.call(ctx, c)
					took := time.Since(start)
					if took > bound {
						t.Errorf("took %v (got %q from %s, %v); want at most %v", took, got, from, err, bound)
					}
					if err == nil && got != master.Addr && got != stale.Addr {
						t.Errorf("got %q from %s; want %s or %s", got, from, master.Addr, stale.Addr)
					}
				})
			}
		}
	}
}
