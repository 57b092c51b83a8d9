package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gomodule/redigo/redis"
)

// HashMod is the plain redigo baseline: one redigo connection per server and
// keys routed by xxhash(key) % number of servers, with nothing between the
// workload and redigo. It is what a program that shards by hand would do,
// and the floor that the library's own overhead is measured from.
//
// A HashMod is not safe for concurrent use (its connections are not).
type HashMod struct {
	conns []redis.Conn
	route []int // scratch: the server of each key of the current batch
	used  []bool
}

// DialHashMod connects to every address, in order. Each connection has
// read and write timeouts of timeout (0 means 10 s) so that a stuck server
// fails the workload instead of hanging it.
func DialHashMod(ctx context.Context, addrs []string, timeout time.Duration) (*HashMod, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no addresses", ErrWorkload)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	h := &HashMod{used: make([]bool, len(addrs))}
	for _, a := range addrs {
		c, err := redis.DialContext(ctx, "tcp", a,
			redis.DialReadTimeout(timeout), redis.DialWriteTimeout(timeout))
		if err != nil {
			h.Close()
			return nil, fmt.Errorf("%w: dial %s: %w", ErrWorkload, a, err)
		}
		h.conns = append(h.conns, c)
	}
	return h, nil
}

// Locate returns the index of the server of key: xxhash(key) % servers.
func (h *HashMod) Locate(key string) int {
	return int(xxhash.Sum64String(key) % uint64(len(h.conns)))
}

// Pipelined runs the workload of the package-level Pipelined: SET every key
// to value, then GET every key, batch commands at a time (batch <= 0: all
// at once). For each batch it sends every command on its server's
// connection, flushes the connections it used, then receives the replies
// in command order (each connection's replies come back in its own order),
// checking each as Pipelined does. Servers are read one after the other,
// not in parallel.
func (h *HashMod) Pipelined(ctx context.Context, keys []string, value string, batch int) error {
	if batch <= 0 {
		batch = len(keys)
	}
	for _, verb := range []string{"SET", "GET"} {
		for start := 0; start < len(keys); start += batch {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%w: %w", ErrWorkload, err)
			}
			chunk := keys[start:min(start+batch, len(keys))]
			if err := h.batch(verb, chunk, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// batch sends, flushes and receives one batch of verb over chunk.
func (h *HashMod) batch(verb string, chunk []string, value string) error {
	h.route = h.route[:0]
	clear(h.used)
	for _, k := range chunk {
		i := h.Locate(k)
		h.route = append(h.route, i)
		h.used[i] = true
		var err error
		if verb == "SET" {
			err = h.conns[i].Send("SET", k, value)
		} else {
			err = h.conns[i].Send("GET", k)
		}
		if err != nil {
			return fmt.Errorf("%w: send: %w", ErrWorkload, err)
		}
	}
	for i, c := range h.conns {
		if h.used[i] {
			if err := c.Flush(); err != nil {
				return fmt.Errorf("%w: flush: %w", ErrWorkload, err)
			}
		}
	}
	for j, i := range h.route {
		r, err := h.conns[i].Receive()
		if err := CheckReply(verb, r, err, len(value)); err != nil {
			return fmt.Errorf("%w: key %q: %w", ErrWorkload, chunk[j], err)
		}
	}
	return nil
}

// Close closes every connection.
func (h *HashMod) Close() error {
	var errs []error
	for _, c := range h.conns {
		errs = append(errs, c.Close())
	}
	h.conns = nil
	return errors.Join(errs...)
}
