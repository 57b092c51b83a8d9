package shard_test

import (
	"testing"

	"github.com/shardis/shardis/shard"
)

// FuzzParseClientName checks that any connection name parses without a
// panic and that a parsed name formats back to itself.
func FuzzParseClientName(f *testing.F) {
	for _, s := range []string{"shardis:ab:ring-1", "shardis:ab:migrating:ring-1>cluster-2", "shardis:", "shardis::x",
		"shardis:a:migrating:>", "shardis:ab:fenced:ring-1>ring-2", "shardis:ab:armed:ring-1>cluster-2", "jedis", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := shard.ParseClientName(s)
		if !ok {
			if n != (shard.ClientName{}) {
				t.Fatalf("%q: not ok but %+v", s, n)
			}
			return
		}
		if n.String() != s {
			t.Fatalf("%q parsed as %+v formats as %q", s, n, n.String())
		}
	})
}
