package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A bad percent escape in a query password (sentinel_password) was quoted
// in the error, with the characters after the '%'.
func TestReview4BadEscapeInQueryPasswordNotQuoted(t *testing.T) {
	for _, raw := range []string{
		"redis-ring+sentinel://127.0.0.1:26379?shards=a&sentinel_password=se%Zqcret",
		"redis-ring+sentinel://127.0.0.1:26379?sentinel_password=%Zq&shards=a",
	} {
		_, err := shard.ParseURL(raw)
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Fatalf("ParseURL = %v, want ErrBadConfig", err)
		}
		if strings.Contains(err.Error(), "Zq") {
			t.Errorf("error %q shows part of the password", err)
		}
		if !strings.Contains(err.Error(), "%25") {
			t.Errorf("error %q does not say to write '%%' as %%25", err)
		}
	}
}
