package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A bool field given something else ("true" quoted, 0) and an int field
// given a number beyond an int were refused by the YAML decoder, whose
// error names no field ("line 2: "9223372..." is not a valid int"): in
// JSON, all on line 1, the user could not tell which. They are named by
// their path now, as every other wrong value is.
func TestReview17WrongTypeNamesTheField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"shards: [{addr: 'h1:6379'}]\npool: {wait: 'true'}", `pool.wait: want true or false, not the quoted string "true"`},
		{`{"shards": [{"addr": "h1:6379"}], "pool": {"wait": "true"}}`, "pool.wait"},
		{"shards: [{addr: 'h1:6379'}]\nauto_pipeline: 0", `auto_pipeline: "0" is not true or false`},
		{"shards: [{addr: 'h1:6379'}]\nhealth: {auto_eject: 1}", "health.auto_eject"},
		{"shards: [{addr: 'h1:6379'}]\npool: {max_idle: 9223372036854775808}", `pool.max_idle: "9223372036854775808" is not a valid int`},
		{`{"shards": [{"addr": "h1:6379", "weight": 99999999999999999999}]}`, "shards[0].weight"},
	} {
		_, err := shard.ParseConfig([]byte(tc.in))
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%q) = %v, want ErrBadConfig saying %q", tc.in, err, tc.want)
		}
	}
	// What the decoder takes is still taken: YAML 1.1's yes and off, an
	// int in hex or with underscores.
	cfg, err := shard.ParseConfig([]byte("shards: [{addr: 'h1:6379', weight: 0x10}, {addr: 'h2:6379', weight: 1_000}]\npool: {wait: yes}\nauto_pipeline: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Pool.Wait || !cfg.DisableAutoPipeline || cfg.Shards[0].Weight != 16 || cfg.Shards[1].Weight != 1000 {
		t.Fatalf("wait %v, auto pipeline off %v, weights %d %d; want true, true, 16, 1000",
			cfg.Pool.Wait, cfg.DisableAutoPipeline, cfg.Shards[0].Weight, cfg.Shards[1].Weight)
	}
}
