package shard_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestWeightRule holds the one rule for weights in every way a Config is
// written: a weight is 1 or more; a file or URL that leaves it out gets 1;
// 0 (or less) is an error, never silently 1.
func TestWeightRule(t *testing.T) {
	const a, b = "127.0.0.1:7001", "127.0.0.1:7002"
	tests := []struct {
		name    string
		parse   func() (shard.Config, error)
		weights []int // nil: must fail
	}{
		{"struct 2,1", func() (shard.Config, error) {
			c := shard.Config{Shards: []ring.Shard{{Addr: a, Weight: 2}, {Addr: b, Weight: 1}}}
			return c, c.Validate()
		}, []int{2, 1}},
		{"struct 0", func() (shard.Config, error) {
			c := shard.Config{Shards: []ring.Shard{{Addr: a, Weight: 0}, {Addr: b, Weight: 1}}}
			return c, c.Validate()
		}, nil},
		{"struct -1", func() (shard.Config, error) {
			c := shard.Config{Shards: []ring.Shard{{Addr: a, Weight: -1}, {Addr: b, Weight: 1}}}
			return c, c.Validate()
		}, nil},
		{"yaml omitted", yamlConfig("shards:\n  - {addr: '" + a + "'}\n  - {addr: '" + b + "', weight: 3}\n"), []int{1, 3}},
		{"yaml 0", yamlConfig("shards:\n  - {addr: '" + a + "', weight: 0}\n  - {addr: '" + b + "'}\n"), nil},
		{"yaml -2", yamlConfig("shards:\n  - {addr: '" + a + "', weight: -2}\n  - {addr: '" + b + "'}\n"), nil},
		{"json omitted", yamlConfig(`{"shards": [{"addr": "` + a + `"}, {"addr": "` + b + `", "weight": 2}]}`), []int{1, 2}},
		{"json 0", yamlConfig(`{"shards": [{"addr": "` + a + `", "weight": 0}, {"addr": "` + b + `"}]}`), nil},
		{"url omitted", urlConfig("redis-ring://" + a + "," + b), []int{1, 1}},
		{"url 2,1", urlConfig("redis-ring://" + a + "," + b + "?weights=2,1"), []int{2, 1}},
		{"url 0", urlConfig("redis-ring://" + a + "," + b + "?weights=0,1"), nil},
		{"url -1", urlConfig("redis-ring://" + a + "," + b + "?weights=1,-1"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.parse()
			if tc.weights == nil {
				if !errors.Is(err, shard.ErrBadConfig) {
					t.Fatalf("err = %v, want ErrBadConfig", err)
				}
				if !strings.Contains(err.Error(), "weights are 1 or more") {
					t.Errorf("error %q does not state the rule", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Shards) != len(tc.weights) {
				t.Fatalf("%d shards, want %d", len(cfg.Shards), len(tc.weights))
			}
			for i, w := range tc.weights {
				if cfg.Shards[i].Weight != w {
					t.Errorf("shard %d weight %d, want %d", i, cfg.Shards[i].Weight, w)
				}
			}
		})
	}
}

func yamlConfig(text string) func() (shard.Config, error) {
	return func() (shard.Config, error) { return shard.ParseConfig([]byte(text)) }
}

func urlConfig(raw string) func() (shard.Config, error) {
	return func() (shard.Config, error) { return shard.ParseURL(raw) }
}

// TestConfigErrorTexts pins what a user reads for the common mistakes: the
// field by its path with the accepted names, an empty file, JSON errors
// labelled as JSON, one "shardis: bad config: " prefix, the same server
// under two spellings.
func TestConfigErrorTexts(t *testing.T) {
	tests := []struct {
		name, text string
		want       string // the whole message
	}{
		{"unknown nested field", "shards: [{addr: '127.0.0.1:1'}]\nhealth:\n  failurelimit: 3\n",
			"shardis: bad config: line 3: unknown field health.failurelimit (known: interval, failure_limit, timeout, auto_eject)"},
		{"unknown field in a list", "shards:\n  - {addr: '127.0.0.1:1', wieght: 2}\n",
			"shardis: bad config: line 2: unknown field shards[0].wieght (known: addr, name, weight, sentinel)"},
		{"unknown tls field", "shards: [{addr: '127.0.0.1:1'}]\npool:\n  tls: {ca: x}\n",
			"shardis: bad config: line 3: unknown field pool.tls.ca (known: ca_file, cert_file, key_file, server_name)"},
		{"unknown json field", `{"shards": [{"addr": "127.0.0.1:1"}], "cluster": {"readfrom": "master"}}`,
			"shardis: bad config: line 1: unknown field cluster.readfrom (known: refresh_interval, min_refresh_interval, max_redirects, max_retry_wait, read_from)"},
		{"empty", "", "shardis: bad config: the file is empty (want YAML or JSON naming shards, seeds or a url)"},
		{"only comments", "# shards: later\n\n", "shardis: bad config: the file is empty (want YAML or JSON naming shards, seeds or a url)"},
		{"a list", "- 127.0.0.1:1\n", "shardis: bad config: line 1: the file must hold a mapping of fields (mode, shards, seeds, pool, ...), not a list"},
		{"json syntax", "{\n  \"shards\": [\n    {\"addr\": \"127.0.0.1:1\"}\n  ]]\n}",
			"shardis: bad config: JSON: line 4: invalid character ']' after object key:value pair"},
		{"json type", `{"shards": [{"addr": "127.0.0.1:1"}], "pool": {"max_idle": "many"}}`,
			`shardis: bad config: line 1: pool.max_idle: "many" is not a valid int`},
		{"ring error", "hash: nope\nshards: [{addr: '127.0.0.1:1'}]\n",
			`shardis: bad config: unknown ring algorithm "nope" (want murmur3, jedis, jedis-legacy, ketama or modula)`},
		{"pool error", "shards: [{addr: '127.0.0.1:1'}]\npool: {max_idle: -1}\n",
			"shardis: bad config: bad pool options: MaxIdle is -1, must not be negative"},
		{"url error", "url: redis-ring://nohost\n", `shardis: bad config: url: address "nohost": want host:port`},
		{"localhost twice", "shards: [{addr: 'localhost:7431'}, {addr: '127.0.0.1:7431'}]\n",
			"shardis: bad config: shards 0 (localhost:7431) and 1 (127.0.0.1:7431) are the same server"},
		{"ipv6 localhost twice", "shards: [{addr: '[::1]:7431'}, {addr: 'LOCALHOST:7431'}]\n",
			"shardis: bad config: shards 0 ([::1]:7431) and 1 (LOCALHOST:7431) are the same server"},
		{"mapped ipv4 twice", "shards: [{addr: '10.0.0.1:7431'}, {addr: '[::ffff:10.0.0.1]:7431'}]\n",
			"shardis: bad config: shards 0 (10.0.0.1:7431) and 1 ([::ffff:10.0.0.1]:7431) are the same server"},
		{"same address twice", "shards: [{addr: '10.0.0.1:7431'}, {addr: '10.0.0.1:7431', name: b}]\n",
			"shardis: bad config: duplicate shard: shards 0 and 1 both have address 10.0.0.1:7431"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := shard.ParseConfig([]byte(tc.text))
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("err = %v, want ErrBadConfig", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, tc.want)
			}
			if strings.Count(err.Error(), "shardis:") != 1 || strings.Contains(err.Error(), "yaml:") {
				t.Errorf("error %q repeats a prefix or names the YAML library", err)
			}
		})
	}
	// Different ports and different servers stay allowed.
	for _, ok := range []string{
		"shards: [{addr: 'localhost:7431'}, {addr: '127.0.0.1:7432'}]",
		"shards: [{addr: '127.0.0.1:7431'}, {addr: '[::1]:7431'}]",
		"shards: [{addr: 'redis-a:7431'}, {addr: 'redis-b:7431'}]",
	} {
		if _, err := shard.ParseConfig([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestLoadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := shard.LoadConfig(empty)
	if want := "shardis: bad config: " + empty + ": the file is empty (want YAML or JSON naming shards, seeds or a url)"; err == nil || err.Error() != want {
		t.Errorf("empty file: %v, want %s", err, want)
	}
	_, err = shard.LoadConfig(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, shard.ErrBadConfig) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrBadConfig and os.ErrNotExist", err)
	}
	// Ring and pool causes stay matchable behind ErrBadConfig.
	_, err = shard.ParseConfig([]byte("hash: nope\nshards: [{addr: '127.0.0.1:1'}]"))
	if !errors.Is(err, ring.ErrUnknownAlgorithm) {
		t.Errorf("%v does not match ring.ErrUnknownAlgorithm", err)
	}
}

// TestConfigStringShowsDefaults: what fmt.Println(cfg) prints is what the
// client will use, and never a secret.
func TestConfigStringShowsDefaults(t *testing.T) {
	ringCfg := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:7001", Weight: 1}}}
	ringCfg.Pool.Password = "hunter2-secret"
	ringCfg.Pool.Username = "app"
	clusterCfg := shard.Config{Mode: shard.ModeCluster, Seeds: []string{"127.0.0.1:7000"}}
	clusterCfg.Health.Interval = -1
	clusterCfg.Cluster.ReadFrom = shard.ReadReplicaLatency
	from := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:7001", Weight: 1}}}
	migrating := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:7001", Weight: 1}, {Addr: "127.0.0.1:7002", Weight: 1}},
		Migration: &shard.Migration{From: &from}}
	migrating.Pool.Password = "hunter2-secret"
	tests := []struct {
		cfg  shard.Config
		want []string
	}{
		{migrating, []string{"Mode: ring", "Migration: {From: " + shard.TopologyID(from) + "}"}},
		{ringCfg, []string{"Mode: ring", "Hash: murmur3", "KeyHash: murmur3", "Tag: cluster", "ReadTimeout=3s", "DialTimeout=5s",
			"WriteTimeout=3s", "IdleTimeout=5m0s", "MaxIdle=64", "Interval: 1s", "FailureLimit: 3", "Timeout: 500ms", "Password=***", "AutoPipeline: true"}},
		{clusterCfg, []string{"Mode: cluster", "Seeds: [127.0.0.1:7000]", "RefreshInterval: 1m0s", "MinRefreshInterval: 100ms",
			"MaxRedirects: 5", "MaxRetryWait: 5s", "ReadFrom: replica-latency", "Interval: off"}},
	}
	for _, tc := range tests {
		s := fmt.Sprint(tc.cfg)
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s\nlacks %q", s, w)
			}
		}
		if strings.Contains(s, "hunter2") || strings.Contains(s, "Timeout: 0s") || strings.Contains(s, "Timeout=0s") {
			t.Errorf("%s shows a secret or a zero timeout", s)
		}
	}
}
