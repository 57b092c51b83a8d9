package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview9HealthTimeoutTooShortIsABadConfig: a health timeout of a
// few nanoseconds (Timeout: 500, meant as milliseconds) was accepted,
// and no health check could then succeed: a check that had to dial
// failed, so healthy nodes were marked down (every command to them
// failing with ErrNodeDown), and one that found its context over before
// it had a connection gave no verdict, so a dead node was never marked
// down. The health interval refuses such values; the timeout now does
// too (a positive value below 1ms), in a Config, a URL and a file alike.
func TestReview9HealthTimeoutTooShortIsABadConfig(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := ringConfig([]*redistest.Server{srv})
	cfg.Health.Interval = 10 * time.Millisecond
	cfg.Health.Timeout = 500 // meant as 500ms
	if c, err := shard.New(ctx, cfg); err == nil {
		waitUntil(2*time.Second, func() bool { return c.Stats().Nodes[0].Down })
		st := c.Stats().Nodes[0]
		c.Close()
		t.Errorf("New with Health.Timeout 500ns: accepted; the healthy server: down %t, %d errors", st.Down, st.Errors)
	} else if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("New with Health.Timeout 500ns: %v, want ErrBadConfig naming the field", err)
	}

	for _, tc := range []struct {
		timeout time.Duration
		bad     bool
	}{
		{time.Nanosecond, true},
		{999 * time.Microsecond, true},
		{-time.Second, true},
		{0, false},
		{time.Millisecond, false},
		{500 * time.Millisecond, false},
	} {
		c := ringConfig([]*redistest.Server{srv})
		c.Health.Timeout = tc.timeout
		if err := c.Validate(); tc.bad != (err != nil) || (err != nil && !errors.Is(err, shard.ErrBadConfig)) {
			t.Errorf("Validate with Health.Timeout %v: %v, want bad=%t (ErrBadConfig)", tc.timeout, err, tc.bad)
		}
		u := "redis-ring://" + srv.Addr + "?health_timeout=" + tc.timeout.String()
		if _, err := shard.ParseURL(u); tc.bad != (err != nil) || (err != nil && !errors.Is(err, shard.ErrBadConfig)) {
			t.Errorf("ParseURL(%q): %v, want bad=%t (ErrBadConfig)", u, err, tc.bad)
		}
		file := "shards: [{addr: '" + srv.Addr + "'}]\nhealth: {timeout: " + tc.timeout.String() + "}\n"
		if _, err := shard.ParseConfig([]byte(file)); tc.bad != (err != nil) || (err != nil && !errors.Is(err, shard.ErrBadConfig)) {
			t.Errorf("ParseConfig(%q): %v, want bad=%t (ErrBadConfig)", file, err, tc.bad)
		}
	}
}
