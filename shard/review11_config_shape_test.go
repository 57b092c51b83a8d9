package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview11ConfigFileShapeErrorsNameTheField: a file value of the
// wrong shape (a list of addresses for shards, a single value for pool,
// a list for mode) was reported in the decoder's Go terms, with no field
// name: `line 2: "127.0.0..." is not a valid struct { Addr string
// "yaml:\"addr\""; ... }`, `"x" is not a valid shard.fileSentinel`,
// `cannot unmarshal !!seq into shard.Mode`; in a JSON file, all on line
// 1. The error now names the field by its path and the shape it takes
// (a mapping of which fields, a list, a single value), and quotes no
// value (a misplaced one may be a password).
func TestReview11ConfigFileShapeErrorsNameTheField(t *testing.T) {
	const ok = "shards: [{addr: 127.0.0.1:6379}]\n"
	for _, tc := range []struct{ file, path, want string }{
		{"shards:\n  - 127.0.0.1:6379\n", "shards[0]", "addr, name, weight, sentinel"},
		{`{"shards": ["127.0.0.1:6379"]}`, "shards[0]", "addr, name, weight, sentinel"},
		{"shards: 127.0.0.1:6379\n", "shards", "list"},
		{ok + "pool: S3cretPassword\n", "pool", "max_idle"},
		{ok + "mode: [ring]\n", "mode", "single value"},
		{ok + "sentinel: x\n", "sentinel", "addrs"},
		{"mode: cluster\nseeds: 127.0.0.1:7000\n", "seeds", "list"},
		{"shards: [{addr: [127.0.0.1:6379]}]\n", "shards[0].addr", "single value"},
		{ok + "pool: {tls: yes}\n", "pool.tls", "ca_file"},
		{ok + "health: {auto_eject: [1]}\n", "health.auto_eject", "single value"},
		{ok + "health: {interval: {s: 1}}\n", "health.interval", "single value"},
		{ok + "migration: 5\n", "migration", "from"},
		{ok + "migration: {addrs: [a]}\n", "migration.addrs", "mapping"},
		{"shards: [{name: a, sentinel: x}]\n", "shards[0].sentinel", "master"},
	} {
		_, err := shard.ParseConfig([]byte(tc.file))
		if err == nil {
			t.Errorf("%q: no error", tc.file)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(msg, tc.path+":") || !strings.Contains(msg, tc.want) {
			t.Errorf("%q: %v; want ErrBadConfig naming %s and %q", tc.file, err, tc.path, tc.want)
		}
		for _, goTerm := range []string{"struct", "shard.", "!!", "[]string", "unmarshal", "S3cret"} {
			if strings.Contains(msg, goTerm) {
				t.Errorf("%q: %v: the error shows %q", tc.file, err, goTerm)
			}
		}
	}
	// What is well formed still loads: an empty tls section turns TLS on.
	cfg, err := shard.ParseConfig([]byte(ok + "pool: {tls: }\nmigration: {addrs: {\"127.0.0.1:6379\": \"10.0.0.1:6379\"}, from: \"redis-ring://127.0.0.1:6380\"}\n"))
	if err != nil || cfg.Pool.TLSConfig == nil || cfg.Migration == nil {
		t.Errorf("a well-formed file: %+v, %v", cfg, err)
	}
}
