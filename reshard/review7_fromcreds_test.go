package reshard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// The mover reaches every node with To's pool options. A From that gives
// another password was ignored without a word (the old node that wants
// it refused the mover's connections with NOAUTH); it is refused as a bad
// config, before anything is read or moved, and the error never carries
// the password.
func TestReview7MoveRefusesFromCredentialsItWouldIgnore(t *testing.T) {
	const secret = "review7-mover-old-secret"
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	names := []string{"s0", "s1"}
	from := mustParse(t, ringURL(servers[:1], names[:1], nil))
	to := mustParse(t, ringURL(servers[1:], names[1:], nil))
	from.Pool.Password = secret
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, dry := range []bool{true, false} {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, DryRun: dry, SkipClientCheck: true})
		require.ErrorIs(t, err, shard.ErrBadConfig, "dry run %v", dry)
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			require.NotContains(t, text, secret)
		}
	}
}
