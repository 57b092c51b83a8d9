package reshard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/require"
)

// The mover's MIGRATE carries the new nodes' password (AUTH); an old node
// that does not know MIGRATE echoes its arguments in its error reply. The
// error Move returns must not carry the password.
func TestMoveErrorHidesThePassword(t *testing.T) {
	const secret = "s3cret-mover-pw"
	servers := redistest.StartNTB(t, 2, redistest.Options{
		DefaultPassword: secret,
		Args:            []string{"--rename-command", "MIGRATE", "MIGRATE-hidden"},
	})
	names := []string{"s0", "s1"}
	from := mustParse(t, ringURL(servers[:1], names[:1], nil))
	to := mustParse(t, ringURL(servers[1:], names[1:], nil))
	from.Pool.Password, to.Pool.Password = secret, secret
	fill(t, from, "secret", 20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipVerify: true})
	require.Error(t, err, "the old node has no MIGRATE")
	for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		require.NotContains(t, text, secret)
	}
}
