package shard_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSentinelURL(t *testing.T) {
	cfg, err := shard.ParseURL("redis-ring+sentinel://app:data%40pw@s1:26379,s2:26380?shards=shard-a=mymaster-a,shard-b,10.0.0.3:6379+shard-c&weights=2,1,1&hash=jedis" +
		"&sentinel_username=sen&sentinel_password=sen-pw&read_from=replica-random&failover_wait=3s&sentinel_timeout=250ms")
	require.NoError(t, err)
	assert.Equal(t, []ring.Shard{
		{Name: "shard-a", Weight: 2},
		{Name: "shard-b", Weight: 1},
		{Name: "shard-c", Addr: "10.0.0.3:6379", Weight: 1},
	}, cfg.Shards)
	assert.Equal(t, []shard.SentinelShard{{Name: "shard-a", MasterName: "mymaster-a"}, {Name: "shard-b"}}, cfg.Sentinel.Shards)
	assert.Equal(t, []string{"s1:26379", "s2:26380"}, cfg.Sentinel.Addrs)
	assert.Equal(t, "app", cfg.Pool.Username)
	assert.Equal(t, "data@pw", cfg.Pool.Password)
	assert.Equal(t, "sen", cfg.Sentinel.Username)
	assert.Equal(t, "sen-pw", cfg.Sentinel.Password)
	assert.Equal(t, shard.ReadReplicaRandom, cfg.Sentinel.ReadFrom)
	assert.Equal(t, 3*time.Second, cfg.Sentinel.FailoverWait)
	assert.Equal(t, 250*time.Millisecond, cfg.Sentinel.Timeout)
	assert.Nil(t, cfg.Sentinel.TLSConfig)
	assert.Equal(t, ring.Jedis, cfg.Hash)
	s := cfg.String()
	assert.NotContains(t, s, "sen-pw")
	assert.NotContains(t, s, "data@pw")
	assert.Contains(t, s, "mymaster-a")

	cfg, err = shard.ParseURL("rediss-ring+sentinel://s1:26379?shards=a")
	require.NoError(t, err)
	assert.NotNil(t, cfg.Sentinel.TLSConfig)
	assert.NotNil(t, cfg.Pool.TLSConfig)
}

func TestParseSentinelURLRejectsBadInput(t *testing.T) {
	for _, raw := range []string{
		"redis-ring+sentinel://s1:26379",                        // no shards
		"redis-ring+sentinel://s1:26379?shards=",                // empty
		"redis-ring+sentinel://s1:26379?shards=a,,b",            // empty entry
		"redis-ring+sentinel://s1:26379?shards==m",              // no name
		"redis-ring+sentinel://s1:26379?shards=a,a",             // twice
		"redis-ring+sentinel://s1:26379?shards=a&names=x",       // names
		"redis-ring+sentinel://s1?shards=a",                     // bad sentinel address
		"redis-ring+sentinel://s1:26379?shards=a&read_from=any", // bad policy
		"redis-ring+sentinel://s1:26379?shards=a&failover_wait=x",
		"redis-ring+sentinel://s1:26379?shards=a&sentinel_tls=maybe",
		"redis-ring+sentinel://s1:26379?shards=h:0+x",                 // bad plain entry
		"redis-ring+sentinel://s1:26379?shards=a&sentinel_username=u", // user without password
	} {
		t.Run(raw, func(t *testing.T) {
			_, err := shard.ParseURL(raw)
			require.Error(t, err)
			assert.ErrorIs(t, err, shard.ErrBadConfig)
			assert.True(t, strings.HasPrefix(err.Error(), "shardis: "), err.Error())
		})
	}
	_, err := shard.ParseURL("redis-ring+sentinel://s1:26379?shards=a&sentinel_password=hunter2&sentinel_refresh_interval=x")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2")
}

func TestSentinelConfigFile(t *testing.T) {
	t.Setenv("SENTINEL_PW", "from-env")
	cfg, err := shard.ParseConfig([]byte(`
mode: ring
hash: ketama
shards:
  - {addr: "10.0.0.1:6379", name: shard-a}
  - {name: shard-b, weight: 2, sentinel: {master: mymaster-b}}
  - {name: shard-c, sentinel: {master: mymaster-c, addrs: ["10.0.1.9:26379"], username: other, password: pw2}}
sentinel:
  addrs: ["10.0.1.1:26379", "10.0.1.2:26379"]
  password_env: SENTINEL_PW
  read_from: replica-latency
  refresh_interval: 2s
  failover_wait: 4s
`))
	require.NoError(t, err)
	assert.Equal(t, []ring.Shard{
		{Name: "shard-a", Addr: "10.0.0.1:6379", Weight: 1},
		{Name: "shard-b", Weight: 2},
		{Name: "shard-c", Weight: 1},
	}, cfg.Shards)
	require.Len(t, cfg.Sentinel.Shards, 2)
	assert.Equal(t, shard.SentinelShard{Name: "shard-b", MasterName: "mymaster-b"}, cfg.Sentinel.Shards[0])
	assert.Equal(t, shard.SentinelShard{Name: "shard-c", MasterName: "mymaster-c", Addrs: []string{"10.0.1.9:26379"}, Username: "other", Password: "pw2"}, cfg.Sentinel.Shards[1])
	assert.Equal(t, "from-env", cfg.Sentinel.Password)
	assert.Equal(t, shard.ReadReplicaLatency, cfg.Sentinel.ReadFrom)
	assert.Equal(t, 2*time.Second, cfg.Sentinel.RefreshInterval)
	assert.Equal(t, 4*time.Second, cfg.Sentinel.FailoverWait)
	assert.NotContains(t, cfg.String(), "from-env")
	assert.NotContains(t, cfg.String(), "pw2")

	// The same in JSON.
	cfg, err = shard.ParseConfig([]byte(`{"shards": [{"addr": "10.0.0.1:6379", "name": "a"}, {"name": "b", "sentinel": {"master": "mb"}}],
		"sentinel": {"addrs": ["10.0.1.1:26379"], "username": "u", "password": "p", "read_from": "replica-random"}}`))
	require.NoError(t, err)
	assert.Equal(t, []ring.Shard{{Name: "a", Addr: "10.0.0.1:6379", Weight: 1}, {Name: "b", Weight: 1}}, cfg.Shards)
	assert.Equal(t, []shard.SentinelShard{{Name: "b", MasterName: "mb"}}, cfg.Sentinel.Shards)
	assert.Equal(t, "u", cfg.Sentinel.Username)
	assert.Equal(t, shard.ReadReplicaRandom, cfg.Sentinel.ReadFrom)

	for name, text := range map[string]string{
		"addr and sentinel": `shards: [{name: a, addr: "h:1", sentinel: {master: m}}]` + "\nsentinel: {addrs: [\"s:1\"]}",
		"no sentinels":      `shards: [{name: a, sentinel: {master: m}}]`,
		"no name":           `shards: [{sentinel: {master: m}}]` + "\nsentinel: {addrs: [\"s:1\"]}",
		"unset env":         `shards: [{name: a, sentinel: {master: m}}]` + "\nsentinel: {addrs: [\"s:1\"], password_env: NOT_SET_ANYWHERE_42}",
		"unknown field":     `shards: [{name: a, sentinel: {mastr: m}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := shard.ParseConfig([]byte(text))
			require.Error(t, err)
			assert.ErrorIs(t, err, shard.ErrBadConfig)
		})
	}
}

func TestSentinelConfigValidate(t *testing.T) {
	base := func() shard.Config {
		return shard.Config{
			Shards:   []ring.Shard{{Name: "a", Addr: "10.0.0.1:6379", Weight: 1}, {Name: "b", Weight: 1}},
			Sentinel: shard.SentinelOptions{Addrs: []string{"10.0.0.9:26379"}, Shards: []shard.SentinelShard{{Name: "b"}}},
		}
	}
	require.NoError(t, base().Validate())
	tests := []struct {
		name string
		edit func(*shard.Config)
	}{
		{"sentinel shard not in ring", func(c *shard.Config) { c.Sentinel.Shards = append(c.Sentinel.Shards, shard.SentinelShard{Name: "z"}) }},
		{"ring shard without settings", func(c *shard.Config) { c.Shards = append(c.Shards, ring.Shard{Name: "c", Weight: 1}) }},
		{"unnamed", func(c *shard.Config) { c.Shards[1].Name = ""; c.Sentinel.Shards[0].Name = "" }},
		{"name with colon", func(c *shard.Config) { c.Shards[1].Name = "b:1"; c.Sentinel.Shards[0].Name = "b:1" }},
		{"no sentinel addrs", func(c *shard.Config) { c.Sentinel.Addrs = nil }},
		{"duplicate sentinel", func(c *shard.Config) { c.Sentinel.Addrs = []string{"h:1", "h:1"} }},
		{"bad policy", func(c *shard.Config) { c.Sentinel.ReadFrom = "nearest" }},
		{"negative wait", func(c *shard.Config) { c.Sentinel.FailoverWait = -1 }},
		{"cluster mode", func(c *shard.Config) { c.Mode = shard.ModeCluster; c.Shards = nil; c.Seeds = []string{"h:1"} }},
		{"empty addr without sentinels", func(c *shard.Config) { c.Sentinel = shard.SentinelOptions{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base()
			tt.edit(&cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.True(t, errors.Is(err, shard.ErrBadConfig), "%v", err)
		})
	}
}

// TestSentinelPlacementUnchanged checks that a ring with Sentinel shards
// places every key exactly where a plain ring with the same shard names
// and weights does, for every algorithm: the Sentinel shard's address
// never enters placement.
func TestSentinelPlacementUnchanged(t *testing.T) {
	for _, alg := range []ring.Algorithm{ring.Murmur3, ring.Jedis, ring.JedisLegacy, ring.Ketama, ring.Modula} {
		t.Run(string(alg), func(t *testing.T) {
			plain := shard.Config{Hash: alg, Shards: []ring.Shard{
				{Name: "shard-a", Addr: "10.0.0.1:6379", Weight: 1},
				{Name: "shard-b", Addr: "10.0.0.2:6379", Weight: 2},
				{Name: "shard-c", Addr: "10.0.0.3:6379", Weight: 1},
			}}
			mixed := plain
			mixed.Shards = []ring.Shard{plain.Shards[0], {Name: "shard-b", Weight: 2}, {Name: "shard-c", Weight: 1}}
			mixed.Sentinel = shard.SentinelOptions{Addrs: []string{"10.0.0.9:26379"},
				Shards: []shard.SentinelShard{{Name: "shard-b", MasterName: "mb"}, {Name: "shard-c", MasterName: "mc"}}}
			require.NoError(t, mixed.Validate())
			pr, err := ring.New(plain.RingConfig())
			require.NoError(t, err)
			mr, err := ring.New(mixed.RingConfig())
			require.NoError(t, err)
			require.Len(t, mr.Shards(), 3)
			counts := make([]int, 3)
			for i := range 20000 {
				k := fmt.Sprintf("user:%d", i)
				p, m := pr.Locate(k), mr.Locate(k)
				if p != m {
					t.Fatalf("key %q: plain ring shard %d, Sentinel ring shard %d", k, p, m)
				}
				counts[m]++
			}
			for i, n := range counts {
				assert.Positive(t, n, "shard %d gets keys", i)
			}
		})
	}
}

// TestSentinelJedisGoldenVectors places the keys of Jedis's golden
// vectors (ring/testdata, generated by Jedis itself for four named,
// weighted shards) on a ring where two of the four shards are Sentinel
// shards: every key lands on the shard Jedis chose.
func TestSentinelJedisGoldenVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "ring", "testdata", "placement-4-named-weighted.tsv"))
	require.NoError(t, err)
	cfg := shard.Config{
		Hash: ring.Jedis,
		Shards: []ring.Shard{
			{Name: "shard-a", Addr: "127.0.0.1:6381", Weight: 2},
			{Name: "shard-b", Weight: 1},
			{Name: "shard-c", Addr: "127.0.0.1:6383", Weight: 1},
			{Name: "shard-d", Weight: 5},
		},
		Sentinel: shard.SentinelOptions{Addrs: []string{"127.0.0.1:26379"},
			Shards: []shard.SentinelShard{{Name: "shard-b"}, {Name: "shard-d"}}},
	}
	require.NoError(t, cfg.Validate())
	rr, err := shard.NewRingRouter(cfg.RingConfig())
	require.NoError(t, err)
	rows := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		require.Len(t, f, 3, line)
		n, err := rr.Route(f[0])
		require.NoError(t, err)
		assert.Equal(t, f[2], n.Name, "key %q", f[0])
		rows++
	}
	assert.Greater(t, rows, 250)
}
