package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// Values that hold the Client (a Pipeline, a Scanner, a Subscription, a
// Conn, a Tx) printed with any fmt verb never show the pool password:
// fmt cannot ask their unexported Client field for its String, and with a
// verb other than %v it used to print the whole configuration.
func TestValuesHoldingTheClientNeverPrintThePassword(t *testing.T) {
	const secret = "s3cret-fmt-pw"
	srv := redistest.StartTB(t, redistest.Options{DefaultPassword: secret})
	cfg := ringConfig([]*redistest.Server{srv})
	cfg.Pool.Password = secret
	c := newClient(t, cfg)
	ctx := context.Background()

	sub, err := c.Subscribe(ctx, "fmt-secret")
	require.NoError(t, err)
	defer sub.Close()
	conn := c.Conn()
	defer conn.Close()
	values := map[string]any{
		"Pipeline":     c.Pipeline(),
		"Scanner":      c.Scan(shard.ScanOptions{}),
		"Subscription": sub,
		"Conn":         conn,
		"Client":       c,
	}
	_, err = c.Tx(ctx, []string{"fmt-secret"}, func(tx *shard.Tx) error {
		for _, verb := range []string{"%v", "%s", "%d"} {
			require.NotContains(t, fmt.Sprintf(verb, tx), secret, "Tx printed with %s", verb)
		}
		return nil
	})
	require.NoError(t, err)
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%T"} {
			out := fmt.Sprintf(verb, v)
			require.NotContains(t, out, secret, "%s printed with %s", name, verb)
		}
	}
}
