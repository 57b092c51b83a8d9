package sentinel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// The errors of a query against real Sentinels name the package once
// ("shardis: sentinel: " at the start) however many Sentinels each add
// their own failure, and keep matching the package's errors and types.
func TestReview11SentinelErrorTextPrefixOnce(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Replicas: 1})
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		master string
		check  func(context.Context, string) error
		is     error
		words  []string
	}{
		{
			name: "unknown master name", master: "no-such-master",
			is:    sentinel.ErrUnknownMaster,
			words: []string{`master "no-such-master"`, "unknown master name"},
		},
		{
			name: "the named master fails the check", master: set.Names()[0],
			check: func(_ context.Context, addr string) error {
				// As shard.Client's check, which asks ROLE, reports it.
				return fmt.Errorf("%w: %s says it is a slave", sentinel.ErrNotMaster, addr)
			},
			is:    sentinel.ErrNotMaster,
			words: []string{"which failed the check: server is not a master", "says it is a slave"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := sentinel.New(tt.master, set.Addrs(), sentinel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			check := tt.check
			if check == nil {
				check = func(context.Context, string) error { return nil }
			}
			_, _, err = c.VerifiedMasterAddr(ctx, check)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, "shardis: sentinel: ") {
				t.Errorf("%q does not start with \"shardis: sentinel: \"", msg)
			}
			for _, p := range []string{"shardis:", "sentinel:"} {
				if n := strings.Count(msg, p); n != 1 {
					t.Errorf("%q appears %d times in %q, want once", p, n, msg)
				}
			}
			if n, want := strings.Count(msg, "; sentinel 127.0.0.1:"), len(set.Addrs()); want == 0 || n != want {
				t.Errorf("%q names %d Sentinels, want each of the %d", msg, n, want)
			}
			for _, w := range tt.words {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lost the context %q", msg, w)
				}
			}
			var qe *sentinel.QueryError
			if !errors.Is(err, sentinel.ErrNoSentinel) || !errors.Is(err, tt.is) || !errors.As(err, &qe) {
				t.Errorf("%q: want errors.Is ErrNoSentinel and %v, errors.As *QueryError", msg, tt.is)
			}
		})
	}
}
