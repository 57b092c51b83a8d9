package reshard

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// limiter paces the mover at so many keys and bytes per second, shared by
// the workers of every old node. A zero rate does not limit.
type limiter struct {
	keys, bytes float64 // per second

	mu    sync.Mutex
	start time.Time
	nKeys float64
	nByte float64
}

func newLimiter(keys, bytes float64) *limiter {
	return &limiter{keys: keys, bytes: bytes, start: time.Now()}
}

// wait books n keys of b bytes and sleeps until the pace allows them.
func (l *limiter) wait(ctx context.Context, n int, b int64) error {
	if l.keys <= 0 && l.bytes <= 0 {
		return nil
	}
	l.mu.Lock()
	// Time the pace did not use (a long stretch of keys that stay, a
	// slow old node) is credit for a burst; at most maxCredit of it is
	// kept, so that the pace holds over any few seconds, not only on
	// average.
	if idle := float64(time.Since(l.start)) - l.due(); idle > float64(maxCredit) {
		l.start = l.start.Add(time.Duration(idle - float64(maxCredit)))
	}
	l.nKeys += float64(n)
	l.nByte += float64(b)
	due := l.due()
	// A tiny rate puts due past what a Duration holds; converting it
	// would wrap to a negative Duration and lift the limit.
	sleep := time.Until(l.start.Add(time.Duration(min(due, float64(math.MaxInt64/2)))))
	l.mu.Unlock()
	if sleep <= 0 {
		return nil
	}
	t := time.NewTimer(sleep)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shardis: %w", ctx.Err())
	}
}

// maxCredit is how much unused time the limiter keeps for a burst. A
// second of it let twice the pace through in the second after a pause
// (6,000 keys within 5 s at 1,000 keys/s); 100 ms adds at most 2% to a
// 5 s window.
const maxCredit = 100 * time.Millisecond

// due returns when, in nanoseconds after start, the keys and bytes booked
// so far are due at the pace.
func (l *limiter) due() float64 {
	var due float64
	if l.keys > 0 {
		due = max(due, l.nKeys/l.keys*float64(time.Second))
	}
	if l.bytes > 0 {
		due = max(due, l.nByte/l.bytes*float64(time.Second))
	}
	return due
}
