package pool

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// nextBorrowFailures runs rounds of: borrow a connection from set, end it
// with end (a command after which the server closes the connection),
// give it back, borrow again at once and send cmd with args. It returns
// how many of those commands failed, and the first error: a connection
// the server is closing was handed to the next caller.
func nextBorrowFailures(t *testing.T, set *Set, addr string, rounds int, end func(c redis.Conn, round int), cmd string, args ...any) (failed int, first error) {
	t.Helper()
	ctx := context.Background()
	for i := range rounds {
		c, err := set.Get(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		end(c, i)
		c.Close()

		c, err = set.Get(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(cmd, args...); err != nil {
			failed++
			if first == nil {
				first = err
			}
		}
		c.Close()
	}
	return failed, first
}
