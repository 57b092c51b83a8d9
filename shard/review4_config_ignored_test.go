package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A Config in Go that sets what its mode ignores is refused, as the URL
// and the file refuse the same settings: New would otherwise run without
// them and say nothing.
func TestReview4ValidateRefusesSettingsTheModeIgnores(t *testing.T) {
	cluster := func(change func(*shard.Config)) shard.Config {
		c := shard.Config{Mode: shard.ModeCluster, Seeds: []string{"127.0.0.1:7000"}}
		change(&c)
		return c
	}
	ringCfg := func(change func(*shard.Config)) shard.Config {
		c := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6379", Weight: 1}}}
		change(&c)
		return c
	}
	router := review4OneNode{shard.Node{Addr: "127.0.0.1:6380"}}
	for _, tc := range []struct {
		name, want string
		cfg        shard.Config
	}{
		{"cluster hash", "Hash", cluster(func(c *shard.Config) { c.Hash = ring.Jedis })},
		{"cluster key hash", "KeyHash", cluster(func(c *shard.Config) { c.KeyHash = "md5" })},
		{"cluster tag", "Tag", cluster(func(c *shard.Config) { c.Tag = "none" })},
		{"cluster auto eject", "AutoEject", cluster(func(c *shard.Config) { c.Health.AutoEject = true })},
		{"cluster router", "Router", cluster(func(c *shard.Config) { c.Router = router })},
		{"cluster sentinel addrs", "Sentinel", cluster(func(c *shard.Config) { c.Sentinel.Addrs = []string{"127.0.0.1:26379"} })},
		{"ring sentinel without sentinel shards", "Sentinel", ringCfg(func(c *shard.Config) { c.Sentinel.Password = "pw" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want ErrBadConfig naming %s", err, tc.want)
			}
		})
	}
	// What each mode uses is still accepted.
	for _, c := range []shard.Config{
		cluster(func(c *shard.Config) { c.Cluster.ReadFrom = shard.ReadReplicaRandom }),
		ringCfg(func(c *shard.Config) { c.Hash, c.Tag, c.Health.AutoEject = ring.Jedis, "none", true }),
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%v) = %v", c, err)
		}
	}
}

// review4OneNode is a Router that places every key on one node.
type review4OneNode struct{ n shard.Node }

func (r review4OneNode) Route(string) (shard.Node, error) { return r.n, nil }
func (r review4OneNode) Nodes() []shard.Node              { return []shard.Node{r.n} }
