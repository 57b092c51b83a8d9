package shard_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"go.yaml.in/yaml/v3"
)

// The config fuzzers share one oracle: a Config that parses must come back
// identical from its own URL or YAML form; input that does not parse must
// give an error matching ErrBadConfig, and nothing may panic.

var configSeeds = []string{
	"mode: ring\nhash: ketama\nkey_hash: md5\ntag: \"{}\"\nauto_pipeline: false\nshards:\n  - {addr: \"127.0.0.1:6381\", name: a, weight: 2}\n  - {addr: \"127.0.0.1:6382\", name: b}\npool:\n  max_idle: 4\n  read_timeout: 750ms\n  username: app\n  password: pw\nhealth:\n  interval: 2s\n  failure_limit: 5\n  auto_eject: true\n",
	`{"url": "redis-ring://127.0.0.1:6381,127.0.0.1:6382", "hash": "modula", "pool": {"client_name": "svc"}}`,
	"mode: cluster\nseeds: [127.0.0.1:7000, 127.0.0.1:7001]\ncluster:\n  refresh_interval: 30s\n  min_refresh_interval: 50ms\n  max_redirects: 3\n  max_retry_wait: 2s\n  read_from: replica-latency\npool: {tls: {server_name: redis.internal}}\n",
	"shards: [{addr: 'localhost:7431'}, {addr: '127.0.0.1:7431'}]",
	"health:\n  failurelimit: 3\n",
	"",
	"[1, 2",
	"shards: [{addr: '127.0.0.1:1', weight: 0}]",
	"a: &x {b: *x}",
	// Rings past ring.MaxPoints are refused from the weights alone.
	"shards: [{addr: '127.0.0.1:1', weight: 16777216}]",
	`{"hash": "jedis", "key_hash": "md5", "shards": [{"addr": "127.0.0.1:1", "weight": 26215}]}`,
}

var urlSeeds = []string{
	"redis-ring://user:p%40ss@h1:6379,h2:6380?hash=jedis&tag=none&names=a,b&weights=2,1&db=3&read_timeout=250ms&max_active=7&wait=true&auto_eject=true&auto_pipeline=false",
	"rediss-cluster://:pw@seed1:7000,seed2:7001?read_from=replica-random&max_redirects=2&refresh_interval=-1s",
	"redis-ring://[::1]:6379?health_interval=-1ns&failure_limit=4&health_timeout=1s&client_name=x%20y",
	"redis-ring://h1:6379?weights=0",
	"redis-ring://h1:6379?bogus=1",
	"redis-ring://localhost:1,127.0.0.1:1",
	"redis-ring://[fe80::1%25eth0]:6379,[fe80::1%2525x%2C]:6380,[fe80::2%en0]:6381",
	"",
	// Rings past ring.MaxPoints are refused from the weights alone.
	"redis-ring://h1:6379,h2:6379?weights=16384,1",
	"redis-ring://h1:6379?hash=modula&weights=1099511627776",
	"redis-ring://h1:6379?hash=jedis&key_hash=md5&weights=26215",
}

func FuzzParseURL(f *testing.F) {
	for _, s := range urlSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, err := shard.ParseURL(raw)
		if err != nil {
			checkBadConfig(t, err, cfg.Pool.Password, raw)
			return
		}
		again, err := shard.ParseURL(configURL(cfg))
		if err != nil {
			t.Fatalf("%q parsed, its own URL %q does not: %v", raw, configURL(cfg), err)
		}
		sameConfig(t, cfg, again)
	})
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range configSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := shard.ParseConfig(data)
		if err != nil {
			checkBadConfig(t, err, cfg.Pool.Password, string(data))
			return
		}
		text := configYAML(t, cfg)
		again, err := shard.ParseConfig(text)
		if err != nil {
			t.Fatalf("config parsed, its own YAML does not: %v\n%s", err, text)
		}
		sameConfig(t, cfg, again)
	})
}

// FuzzLoadConfig checks that a file says what the same bytes say.
func FuzzLoadConfig(f *testing.F) {
	for _, s := range configSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "shardis.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fromFile, ferr := shard.LoadConfig(path)
		fromBytes, berr := shard.ParseConfig(data)
		if (ferr == nil) != (berr == nil) {
			t.Fatalf("LoadConfig error %v, ParseConfig error %v", ferr, berr)
		}
		if ferr != nil {
			checkBadConfig(t, ferr, "", "")
			if !strings.Contains(ferr.Error(), path+": ") {
				t.Fatalf("LoadConfig error %q does not name the file", ferr)
			}
			return
		}
		sameConfig(t, fromBytes, fromFile)
		// And the file's own YAML written to a file loads the same.
		if err := os.WriteFile(path, configYAML(t, fromFile), 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := shard.LoadConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		sameConfig(t, fromFile, again)
	})
}

// checkBadConfig checks a refusal: ErrBadConfig, one prefix, and no
// password. The password must not show in the error, unless the input
// also has its text elsewhere (a host named like the password, as in
// "redis-ring://:0000@0000", or one an escape of the quoted input
// spells), where the error may quote that part.
func checkBadConfig(t *testing.T, err error, password, input string) {
	t.Helper()
	if !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("error %v does not match ErrBadConfig", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "shardis: bad config: ") || strings.HasPrefix(msg, "shardis: bad config: shardis:") {
		t.Fatalf("error %q: want one shardis: bad config: prefix", msg)
	}
	// An error quotes input with %q: an escape there ("\x00" before
	// "000") can spell the password's text without holding it.
	elsewhere := strings.Count(input, password) > 1 || strings.Count(strconv.Quote(input), password) > 1
	if len(password) >= 4 && !elsewhere && strings.Contains(msg, password) {
		t.Fatalf("error %q shows the password", msg)
	}
}

// sameConfig compares two configs field by field; TLS configs by presence
// and server name.
func sameConfig(t *testing.T, want, got shard.Config) {
	t.Helper()
	wt, gt := want.Pool.TLSConfig, got.Pool.TLSConfig
	if (wt == nil) != (gt == nil) || (wt != nil && wt.ServerName != gt.ServerName) {
		t.Fatalf("TLS %v, want %v", gt, wt)
	}
	want.Pool.TLSConfig, got.Pool.TLSConfig = nil, nil
	if len(want.Shards) == 0 {
		want.Shards = nil
	}
	if len(got.Shards) == 0 {
		got.Shards = nil
	}
	if len(want.Seeds) == 0 {
		want.Seeds = nil
	}
	if len(got.Seeds) == 0 {
		got.Seeds = nil
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("round trip changed the config:\n got %#v\nwant %#v", got, want)
	}
}

// escapeAll percent-encodes every byte but letters and digits.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// urlHost writes an address as a URL host: an IPv6 zone follows "%25",
// percent-encoded (RFC 6874).
func urlHost(addr string) string {
	end := strings.IndexByte(addr, ']')
	pct := strings.IndexByte(addr, '%')
	if !strings.HasPrefix(addr, "[") || pct < 0 || end <= pct+1 {
		return addr // no zone, or an empty one: a bare '%' is taken as written
	}
	return addr[:pct] + "%25" + escapeAll(addr[pct+1:end]) + addr[end:]
}

// configURL writes cfg as a URL that ParseURL reads back, a migration's
// old topology as the from option's URL, percent-encoded.
func configURL(cfg shard.Config) string {
	var b strings.Builder
	b.WriteString("redis")
	if cfg.Pool.TLSConfig != nil {
		b.WriteString("s")
	}
	hosts := cfg.Seeds
	if cfg.Mode == shard.ModeCluster {
		b.WriteString("-cluster://")
	} else {
		b.WriteString("-ring://")
		hosts = nil
		for _, s := range cfg.Shards {
			hosts = append(hosts, s.Addr)
		}
	}
	if cfg.Pool.Username != "" || cfg.Pool.Password != "" {
		b.WriteString(escapeAll(cfg.Pool.Username))
		if cfg.Pool.Password != "" {
			b.WriteString(":" + escapeAll(cfg.Pool.Password))
		}
		b.WriteString("@")
	}
	for i, h := range hosts {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(urlHost(h))
	}
	q := url.Values{}
	set := func(name, v string, on bool) {
		if on {
			q.Set(name, v)
		}
	}
	dur := func(name string, d time.Duration) { set(name, d.String(), d != 0) }
	num := func(name string, n int) { set(name, strconv.Itoa(n), n != 0) }
	if cfg.Mode != shard.ModeCluster {
		set("hash", string(cfg.Hash), cfg.Hash != "")
		set("key_hash", cfg.KeyHash, cfg.KeyHash != "")
		set("tag", cfg.Tag, cfg.Tag != "")
		var names, weights []string
		named := false
		for _, s := range cfg.Shards {
			names = append(names, s.Name)
			weights = append(weights, strconv.Itoa(s.Weight))
			named = named || s.Name != ""
		}
		set("names", strings.Join(names, ","), named)
		set("weights", strings.Join(weights, ","), len(weights) > 0)
		set("auto_eject", "true", cfg.Health.AutoEject)
		num("db", cfg.Pool.DB)
	} else {
		c := cfg.Cluster
		dur("refresh_interval", c.RefreshInterval)
		dur("min_refresh_interval", c.MinRefreshInterval)
		num("max_redirects", c.MaxRedirects)
		dur("max_retry_wait", c.MaxRetryWait)
		set("read_from", string(c.ReadFrom), c.ReadFrom != "")
	}
	p := cfg.Pool
	dur("dial_timeout", p.DialTimeout)
	dur("read_timeout", p.ReadTimeout)
	dur("write_timeout", p.WriteTimeout)
	dur("idle_timeout", p.IdleTimeout)
	dur("max_conn_lifetime", p.MaxConnLifetime)
	dur("test_on_borrow", p.TestOnBorrow)
	num("max_idle", p.MaxIdle)
	num("max_active", p.MaxActive)
	set("wait", "true", p.Wait)
	set("client_name", p.ClientName, p.ClientName != "")
	set("auto_pipeline", "false", cfg.DisableAutoPipeline)
	dur("health_interval", cfg.Health.Interval)
	dur("health_timeout", cfg.Health.Timeout)
	num("failure_limit", cfg.Health.FailureLimit)
	if m := cfg.Migration; m != nil && m.From != nil {
		q.Set("from", configURL(*m.From)) // percent-encoded by q.Encode
	}
	if len(q) > 0 {
		b.WriteString("?" + q.Encode())
	}
	return b.String()
}

// configYAML writes cfg in the file format, every field spelled out.
func configYAML(t *testing.T, cfg shard.Config) []byte {
	t.Helper()
	m := map[string]any{}
	set := func(m map[string]any, name string, v any, on bool) {
		if on {
			m[name] = v
		}
	}
	dur := func(m map[string]any, name string, d time.Duration) { set(m, name, d.String(), d != 0) }
	set(m, "mode", string(cfg.Mode), cfg.Mode != "")
	set(m, "hash", string(cfg.Hash), cfg.Hash != "")
	set(m, "key_hash", cfg.KeyHash, cfg.KeyHash != "")
	set(m, "tag", cfg.Tag, cfg.Tag != "")
	var shards []map[string]any
	for _, s := range cfg.Shards {
		shards = append(shards, map[string]any{"addr": s.Addr, "name": s.Name, "weight": s.Weight})
	}
	set(m, "shards", shards, len(shards) > 0)
	set(m, "seeds", cfg.Seeds, len(cfg.Seeds) > 0)
	set(m, "auto_pipeline", false, cfg.DisableAutoPipeline)
	cl := map[string]any{}
	dur(cl, "refresh_interval", cfg.Cluster.RefreshInterval)
	dur(cl, "min_refresh_interval", cfg.Cluster.MinRefreshInterval)
	set(cl, "max_redirects", cfg.Cluster.MaxRedirects, cfg.Cluster.MaxRedirects != 0)
	dur(cl, "max_retry_wait", cfg.Cluster.MaxRetryWait)
	set(cl, "read_from", string(cfg.Cluster.ReadFrom), cfg.Cluster.ReadFrom != "")
	set(m, "cluster", cl, len(cl) > 0)
	p, pm := cfg.Pool, map[string]any{}
	set(pm, "max_idle", p.MaxIdle, p.MaxIdle != 0)
	set(pm, "max_active", p.MaxActive, p.MaxActive != 0)
	dur(pm, "idle_timeout", p.IdleTimeout)
	dur(pm, "max_conn_lifetime", p.MaxConnLifetime)
	set(pm, "wait", true, p.Wait)
	dur(pm, "test_on_borrow", p.TestOnBorrow)
	dur(pm, "dial_timeout", p.DialTimeout)
	dur(pm, "read_timeout", p.ReadTimeout)
	dur(pm, "write_timeout", p.WriteTimeout)
	set(pm, "username", p.Username, p.Username != "")
	set(pm, "password", p.Password, p.Password != "")
	set(pm, "db", p.DB, p.DB != 0)
	set(pm, "client_name", p.ClientName, p.ClientName != "")
	if p.TLSConfig != nil {
		pm["tls"] = map[string]any{"server_name": p.TLSConfig.ServerName}
	}
	set(m, "pool", pm, len(pm) > 0)
	h, hm := cfg.Health, map[string]any{}
	dur(hm, "interval", h.Interval)
	set(hm, "failure_limit", h.FailureLimit, h.FailureLimit != 0)
	dur(hm, "timeout", h.Timeout)
	set(hm, "auto_eject", true, h.AutoEject)
	set(m, "health", hm, len(hm) > 0)
	if mig := cfg.Migration; mig != nil && mig.From != nil {
		mm := map[string]any{"from": configURL(*mig.From)}
		set(mm, "addrs", mig.Addrs, len(mig.Addrs) > 0)
		m["migration"] = mm
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
