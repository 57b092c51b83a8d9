package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// Sentinels that refuse the client's Sentinel password: New fails with
// an error that says so (errors.Is(err, pool.ErrAuth), as a data node's
// refusal does), not only that no Sentinel answered, and the password
// never shows.
func TestReview6SentinelWrongPasswordIsErrAuth(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, SentinelPassword: sentPW})
	cfg := sentinelConfig(set)
	const wrong = "not-the-sentinel-Password"
	cfg.Sentinel.Password = wrong
	_, err := shard.New(context.Background(), cfg)
	if err == nil {
		t.Fatal("New succeeded with a wrong Sentinel password")
	}
	t.Logf("%v", err)
	if !errors.Is(err, pool.ErrAuth) {
		t.Errorf("error %v does not match pool.ErrAuth", err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		if s := fmt.Sprintf(verb, err); strings.Contains(s, wrong) {
			t.Errorf("%s of the error shows the password: %s", verb, s)
		}
	}
}
