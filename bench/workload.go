package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardis/shardis/shard"
)

// ErrWorkload is wrapped by every error of a workload: a command that
// failed or a reply that is not what the workload wrote.
var ErrWorkload = errors.New("shardis: benchmark workload failed")

// Pipelined runs the pipelined workload through c: SET every key to value,
// then GET every key, each in pipelines of batch commands (one Exec per
// batch; batch <= 0 means one pipeline for all keys). Every reply is
// checked: one result per command, "OK" for SET, a value of len(value)
// bytes for GET.
func Pipelined(ctx context.Context, c *shard.Client, keys []string, value string, batch int) error {
	if batch <= 0 {
		batch = len(keys)
	}
	p := c.Pipeline()
	for _, verb := range []string{"SET", "GET"} {
		for start := 0; start < len(keys); start += batch {
			chunk := keys[start:min(start+batch, len(keys))]
			for _, k := range chunk {
				if verb == "SET" {
					p.Send("SET", k, value)
				} else {
					p.Send("GET", k)
				}
			}
			res, err := p.Exec(ctx)
			if err != nil {
				return fmt.Errorf("%w: %s pipeline: %w", ErrWorkload, verb, err)
			}
			if len(res) != len(chunk) {
				return fmt.Errorf("%w: %s pipeline: %d results for %d commands", ErrWorkload, verb, len(res), len(chunk))
			}
			for i, r := range res {
				if err := CheckReply(verb, r.Reply, r.Err, len(value)); err != nil {
					return fmt.Errorf("%w: key %q: %w", ErrWorkload, chunk[i], err)
				}
			}
		}
	}
	return nil
}

// OneByOne runs the same workload as Pipelined with one Client.Do call, and
// so one round trip, per command.
func OneByOne(ctx context.Context, c *shard.Client, keys []string, value string) error {
	for _, k := range keys {
		r, err := c.Do(ctx, "SET", k, value)
		if err := CheckReply("SET", r, err, len(value)); err != nil {
			return fmt.Errorf("%w: key %q: %w", ErrWorkload, k, err)
		}
	}
	for _, k := range keys {
		r, err := c.Do(ctx, "GET", k)
		if err := CheckReply("GET", r, err, len(value)); err != nil {
			return fmt.Errorf("%w: key %q: %w", ErrWorkload, k, err)
		}
	}
	return nil
}

// CheckReply checks one reply of the workloads: err must be nil, a SET must
// answer "OK" and a GET a value of size bytes. Replies may be a string or a
// []byte, as redigo and go-redis return them. The peer benchmarks use it
// too, so that every client does the same work per reply.
func CheckReply(verb string, reply any, err error, size int) error {
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	switch verb {
	case "SET":
		if s, ok := reply.(string); ok && s == "OK" {
			return nil
		}
	case "GET":
		switch v := reply.(type) {
		case []byte:
			if len(v) == size {
				return nil
			}
		case string:
			if len(v) == size {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: unexpected reply %#v", verb, reply)
}
