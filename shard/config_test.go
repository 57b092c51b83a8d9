package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	cfg, err := shard.ParseURL("redis-ring://user:p%40ss@h1:6379,h2:6380?hash=jedis&tag=none&names=a,b&weights=2,1&db=3&read_timeout=250ms&max_active=7&wait=true&auto_eject=true&auto_pipeline=false")
	require.NoError(t, err)
	assert.Equal(t, shard.ModeRing, cfg.Mode)
	assert.Equal(t, []ring.Shard{{Name: "a", Addr: "h1:6379", Weight: 2}, {Name: "b", Addr: "h2:6380", Weight: 1}}, cfg.Shards)
	assert.Equal(t, ring.Jedis, cfg.Hash)
	assert.Equal(t, "none", cfg.Tag)
	assert.Equal(t, "user", cfg.Pool.Username)
	assert.Equal(t, "p@ss", cfg.Pool.Password)
	assert.Equal(t, 3, cfg.Pool.DB)
	assert.Equal(t, 250*time.Millisecond, cfg.Pool.ReadTimeout)
	assert.Equal(t, 7, cfg.Pool.MaxActive)
	assert.True(t, cfg.Pool.Wait)
	assert.True(t, cfg.Health.AutoEject)
	assert.True(t, cfg.DisableAutoPipeline)

	cfg, err = shard.ParseURL("rediss-cluster://:pw@seed1:7000,seed2:7001")
	require.NoError(t, err)
	assert.Equal(t, shard.ModeCluster, cfg.Mode)
	assert.Equal(t, []string{"seed1:7000", "seed2:7001"}, cfg.Seeds)
	assert.NotNil(t, cfg.Pool.TLSConfig)
	assert.Equal(t, "pw", cfg.Pool.Password)
	assert.False(t, cfg.DisableAutoPipeline, "automatic pipelining is on unless turned off")
}

func TestParseURLRejectsBadInput(t *testing.T) {
	for _, raw := range []string{
		"",
		"h1:6379",
		"redis://h1:6379",
		"redis-ring://",
		"redis-ring://h1",
		"redis-ring://h1:0",
		"redis-ring://h1:99999",
		"redis-ring://h1:6379,",
		"redis-ring://h1:6379?bogus=1",
		"redis-ring://h1:6379?db=x",
		"redis-ring://h1:6379?read_timeout=3",
		"redis-ring://h1:6379?names=a,b",
		"redis-ring://h1:6379?weights=0",
		"redis-ring://h1:6379?weights=x",
		"redis-ring://h1:6379?db=1&db=2",
		"redis-cluster://h1:6379?hash=jedis",
		"redis-cluster://h1:6379?db=2",
		"redis-ring://u:%zz@h1:6379",
	} {
		t.Run(raw, func(t *testing.T) {
			_, err := shard.ParseURL(raw)
			assert.ErrorIs(t, err, shard.ErrBadConfig)
		})
	}
}

func TestParseConfigFile(t *testing.T) {
	t.Setenv("SHARDIS_TEST_PW", "from-env")
	yamlText := `
mode: ring
hash: ketama
key_hash: md5
tag: "{}"
auto_pipeline: false
shards:
  - {addr: "127.0.0.1:6381", name: a, weight: 2}
  - {addr: "127.0.0.1:6382", name: b}
pool:
  max_idle: 4
  read_timeout: 750ms
  username: app
  password_env: SHARDIS_TEST_PW
health:
  interval: 2s
  failure_limit: 5
  auto_eject: true
`
	cfg, err := shard.ParseConfig([]byte(yamlText))
	require.NoError(t, err)
	assert.Equal(t, ring.Ketama, cfg.Hash)
	assert.Equal(t, "{}", cfg.Tag)
	assert.True(t, cfg.DisableAutoPipeline)
	assert.Equal(t, []ring.Shard{{Name: "a", Addr: "127.0.0.1:6381", Weight: 2}, {Name: "b", Addr: "127.0.0.1:6382", Weight: 1}}, cfg.Shards)
	assert.Equal(t, 750*time.Millisecond, cfg.Pool.ReadTimeout)
	assert.Equal(t, "from-env", cfg.Pool.Password)
	assert.Equal(t, 2*time.Second, cfg.Health.Interval)
	assert.True(t, cfg.Health.AutoEject)
	assert.NotContains(t, cfg.String(), "from-env")

	jsonText := `{"url": "redis-ring://127.0.0.1:6381,127.0.0.1:6382", "hash": "modula", "pool": {"client_name": "svc"}}`
	cfg, err = shard.ParseConfig([]byte(jsonText))
	require.NoError(t, err)
	assert.Equal(t, ring.Modula, cfg.Hash)
	assert.Len(t, cfg.Shards, 2)
	assert.Equal(t, "svc", cfg.Pool.ClientName)

	for _, bad := range []string{
		`mode: ring`,
		`{"shards": [{"addr": "127.0.0.1:1"}], "unknown": 1}`,
		`{"shards": [{"addr": "127.0.0.1:1"}], "pool": {"read_timeout": "soon"}}`,
		`{"shards": [{"addr": "127.0.0.1:1"}], "pool": {"password_env": "SHARDIS_NOT_SET_ANYWHERE"}}`,
		`{"mode": "galaxy", "shards": [{"addr": "127.0.0.1:1"}]}`,
		`{"mode": "cluster"}`,
		`[1, 2`,
	} {
		_, err := shard.ParseConfig([]byte(bad))
		assert.ErrorIs(t, err, shard.ErrBadConfig, bad)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]shard.Config{
		"no shards":       {},
		"weight zero":     {Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 0}}},
		"duplicate addr":  {Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}, {Addr: "127.0.0.1:1", Weight: 1}}},
		"duplicate name":  {Shards: []ring.Shard{{Name: "a", Addr: "127.0.0.1:1", Weight: 1}, {Name: "a", Addr: "127.0.0.1:2", Weight: 1}}},
		"unknown hash":    {Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}}, Hash: "sha9"},
		"bad tag":         {Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}}, Tag: "{{{"},
		"negative health": {Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}}, Health: shard.HealthOptions{FailureLimit: -1}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := shard.New(t.Context(), cfg)
			assert.ErrorIs(t, err, shard.ErrBadConfig)
		})
	}
}
