package pool

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// A dial whose context's deadline passes while it connects fails with an
// error that matches context.DeadlineExceeded, as one whose context is
// cancelled matches context.Canceled. The connect could instead meet the
// socket deadline the runtime derives from the context before the
// context's own timer fired, and return the runtime's "i/o timeout"
// (os.ErrDeadlineExceeded), which matches neither: a caller, or the node
// health accounting, then took the caller's own deadline for a slow node.
func TestReview20DialPastItsDeadlineMatchesTheContext(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{DialTimeout: 5 * time.Second})
	bg := context.Background()

	took := meanDialTime(t, set, srv.Addr, 20)

	budget := time.Now().Add(3 * time.Second)
	var failed int
	for i := 0; i < 20000 && time.Now().Before(budget); i++ {
		ctx, cancel := context.WithTimeout(bg, rand.N(took+time.Microsecond))
		c, err := set.Dial(ctx, srv.Addr)
		cancel()
		if err != nil {
			var de *DialError
			if !errors.As(err, &de) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("dial %d: Dial = %v, want a *DialError matching context.DeadlineExceeded", i, err)
			}
			failed++
			continue
		}
		c.Close()
	}
	t.Logf("%d dials failed by their deadline", failed)
}
