package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A key given with nothing after it (YAML null) is present: a tls key
// turns TLS on, and so now does a shard's sentinel key make it a Sentinel
// shard with the shared settings (it was refused as a shard with no
// address and no Sentinel settings), and a migration key with its from
// commented out is refused (it was dropped: the client ran without the
// migration and looked for the keys in the new topology alone).
func TestReview17NullSections(t *testing.T) {
	cfg, err := shard.ParseConfig([]byte("shards:\n  - name: a\n    sentinel:\n  - {addr: '10.0.0.3:6379', name: p}\nsentinel: {addrs: ['10.0.9.1:26379']}\n"))
	if err != nil {
		t.Fatalf("null sentinel key: %v", err)
	}
	if len(cfg.Sentinel.Shards) != 1 || cfg.Sentinel.Shards[0].Name != "a" || cfg.Shards[0].Addr != "" {
		t.Fatalf("null sentinel key: Sentinel shards %v, want a", cfg.Sentinel.Shards)
	}
	for _, doc := range []string{
		"shards: [{addr: '10.0.0.4:6379'}]\nmigration:\n  # from: redis-ring://10.0.0.1:6379\n",
		"shards: [{addr: '10.0.0.4:6379'}]\nmigration: ~\n",
		`{"shards": [{"addr": "10.0.0.4:6379"}], "migration": null}`,
	} {
		_, err := shard.ParseConfig([]byte(doc))
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "migration: from or from_file") {
			t.Errorf("ParseConfig(%q) = %v, want ErrBadConfig asking for the migration's from", doc, err)
		}
	}
	// An addr and a null sentinel key is a contradiction, as with a
	// sentinel section.
	_, err = shard.ParseConfig([]byte("shards:\n  - addr: '10.0.0.3:6379'\n    name: a\n    sentinel:\nsentinel: {addrs: ['10.0.9.1:26379']}\n"))
	if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "both an addr and a sentinel section") {
		t.Errorf("addr with a null sentinel key: %v", err)
	}
}
