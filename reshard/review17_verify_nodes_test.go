package reshard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// A VerifyOptions.Nodes entry pasted with its credentials was quoted back
// whole in Verify's error, password included; one that is no host:port
// is a bad config, not a node that did not answer.
func TestReview17VerifyNodesEntryWithoutSecret(t *testing.T) {
	const secret = "v3rifyN0deS3cret"
	srv := redistest.StartTB(t, redistest.Options{DefaultPassword: secret})
	cfg, err := shard.ParseURL("redis-ring://:" + secret + "@" + srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, n := range []string{
		":" + secret + "@" + srv.Addr,
		"default:" + secret + "@" + srv.Addr,
		"redis://:" + secret + "@" + srv.Addr,
		srv.Addr + "?password=" + secret,
		"no-port",
		"host:0",
	} {
		_, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{Nodes: []string{n}})
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("entry %d: error %q, want one matching ErrBadConfig", i, strings.ReplaceAll(errText(err), secret, "SECRET"))
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("entry %d: the password is in the error", i)
		}
	}
	rep, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{Nodes: []string{srv.Addr}})
	if err != nil || rep.Misplaced != 0 {
		t.Fatalf("a good entry: %+v, %v", rep, err)
	}
}

// errText is err's text, or "<nil>".
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
