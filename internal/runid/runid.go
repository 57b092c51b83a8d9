// Package runid asks Redis servers for their run_id, which tells two
// addresses of one server (localhost and 127.0.0.1, a DNS name and its
// address) apart from two servers.
package runid

import (
	"context"
	"strings"
	"sync"

	"github.com/gomodule/redigo/redis"
)

// Of asks each address its server's run_id (INFO server), in parallel, on
// connections from get, which the caller closes the way get's kind wants
// (Close gives a pooled one back). Addresses that give none (no answer, a
// user that may not run INFO) are left out of the map.
func Of(ctx context.Context, get func(context.Context, string) (redis.Conn, error), addrs []string) map[string]string {
	ids := make([]string, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			conn, err := get(ctx, addr)
			if err != nil {
				return
			}
			defer conn.Close()
			info, err := redis.String(redis.DoContext(conn, ctx, "INFO", "server"))
			if err == nil {
				ids[i] = Parse(info)
			}
		})
	}
	wg.Wait()
	out := make(map[string]string, len(addrs))
	for i, addr := range addrs {
		if ids[i] != "" {
			out[addr] = ids[i]
		}
	}
	return out
}

// Parse returns the run_id field of an INFO reply, or "" when it has none.
func Parse(info string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok && id != "" {
			return id
		}
	}
	return ""
}
