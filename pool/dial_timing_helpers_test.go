package pool

import (
	"context"
	"testing"
	"time"
)

// meanDialTime dials addr through set probes times, with no deadline,
// and returns how long a dial took on average: the tests that end a
// dial's context around its end pick their deadlines from it.
func meanDialTime(t *testing.T, set *Set, addr string, probes int) time.Duration {
	t.Helper()
	var took time.Duration
	for range probes {
		start := time.Now()
		c, err := set.Dial(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		took += time.Since(start)
		c.Close()
	}
	return took / time.Duration(probes)
}
