package shard_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// One configuration per mode, written by hand as a Config and as the URL,
// YAML and JSON a user would write: each form parses to the Config, and
// no description of the result (String, every fmt verb, JSON) shows a
// password.
func TestReview17ConfigFormsAgree(t *testing.T) {
	const pw, spw = "Pw-ring-0c1", "Pw-sent-7d2"
	tls12 := &tls.Config{MinVersion: tls.VersionTLS12}
	ringCfg := shard.Config{
		Mode:   shard.ModeRing,
		Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Name: "a", Weight: 2}, {Addr: "[fd00::2]:6379", Name: "b", Weight: 1}},
		Hash:   ring.Ketama, KeyHash: "md5", Tag: "{}",
		Pool:   pool.Options{Username: "app", Password: pw, DB: 3, ReadTimeout: 250 * time.Millisecond, IdleTimeout: pool.Never, TLSConfig: tls12},
		Health: shard.HealthOptions{FailureLimit: 4, AutoEject: true, Interval: 2 * time.Second},
	}
	clusterCfg := shard.Config{
		Mode:                shard.ModeCluster,
		Seeds:               []string{"10.0.1.1:7000", "10.0.1.2:7000"},
		Cluster:             shard.ClusterOptions{RefreshInterval: 30 * time.Second, MaxRedirects: 3, ReadFrom: shard.ReadReplicaLatency, MaxRetryWait: -0},
		Pool:                pool.Options{Username: "app", Password: pw, MaxActive: 8, Wait: true, ClientName: "svc"},
		DisableAutoPipeline: true,
	}
	sentinelCfg := shard.Config{
		Mode:   shard.ModeRing,
		Shards: []ring.Shard{{Name: "a", Weight: 1}, {Addr: "10.0.0.3:6379", Name: "p", Weight: 1}, {Name: "b", Weight: 1}},
		Sentinel: shard.SentinelOptions{
			Shards:   []shard.SentinelShard{{Name: "a", MasterName: "master-a"}, {Name: "b"}},
			Addrs:    []string{"10.0.9.1:26379", "10.0.9.2:26379"},
			Username: "sen", Password: spw, ReadFrom: shard.ReadReplicaRandom,
			FailoverWait: 2 * time.Second, Timeout: 500 * time.Millisecond,
		},
		Pool: pool.Options{Username: "app", Password: pw},
	}
	from := shard.Config{Mode: shard.ModeRing, Shards: []ring.Shard{{Addr: "10.0.0.1:6379", Name: "a", Weight: 1}, {Addr: "10.0.0.2:6379", Name: "b", Weight: 1}}}
	migCfg := shard.Config{Mode: shard.ModeRing, Shards: []ring.Shard{{Addr: "10.0.0.4:6379", Weight: 1}}, Migration: &shard.Migration{From: &from}}
	migAddrs := migCfg
	migAddrs.Migration = &shard.Migration{From: &from, Addrs: map[string]string{"10.0.0.4:6379": "10.1.0.4:6379"}}

	for _, tc := range []struct {
		name  string
		want  shard.Config
		forms map[string]string // "url", "yaml", "json"
	}{
		{"ring", ringCfg, map[string]string{
			"url": "rediss-ring://app:" + pw + "@10.0.0.1:6379,[fd00::2]:6379?names=a,b&weights=2,1&hash=ketama&key_hash=md5&tag=%7B%7D" +
				"&db=3&read_timeout=250ms&idle_timeout=never&failure_limit=4&auto_eject=true&health_interval=2s",
			"yaml": `
shards:
  - {addr: "10.0.0.1:6379", name: a, weight: 2}
  - {addr: "[fd00::2]:6379", name: b}
hash: ketama
key_hash: md5
tag: "{}"
pool: {username: app, password: ` + pw + `, db: 3, read_timeout: 250ms, idle_timeout: never, tls: {}}
health: {failure_limit: 4, auto_eject: true, interval: 2s}
`,
			"json": `{"shards": [{"addr": "10.0.0.1:6379", "name": "a", "weight": 2}, {"addr": "[fd00::2]:6379", "name": "b"}],
 "hash": "ketama", "key_hash": "md5", "tag": "{}",
 "pool": {"username": "app", "password": "` + pw + `", "db": 3, "read_timeout": "250ms", "idle_timeout": "never", "tls": {}},
 "health": {"failure_limit": 4, "auto_eject": true, "interval": "2s"}}`,
		}},
		{"cluster", clusterCfg, map[string]string{
			"url": "redis-cluster://app:" + pw + "@10.0.1.1:7000,10.0.1.2:7000?refresh_interval=30s&max_redirects=3&read_from=replica-latency" +
				"&max_active=8&wait=true&client_name=svc&auto_pipeline=false",
			"yaml": `
mode: cluster
seeds: [10.0.1.1:7000, 10.0.1.2:7000]
cluster: {refresh_interval: 30s, max_redirects: 3, read_from: replica-latency}
pool: {username: app, password: ` + pw + `, max_active: 8, wait: true, client_name: svc}
auto_pipeline: false
`,
			"json": `{"mode": "cluster", "seeds": ["10.0.1.1:7000", "10.0.1.2:7000"],
 "cluster": {"refresh_interval": "30s", "max_redirects": 3, "read_from": "replica-latency"},
 "pool": {"username": "app", "password": "` + pw + `", "max_active": 8, "wait": true, "client_name": "svc"},
 "auto_pipeline": false}`,
		}},
		{"sentinel", sentinelCfg, map[string]string{
			"url": "redis-ring+sentinel://app:" + pw + "@10.0.9.1:26379,10.0.9.2:26379?shards=a=master-a,10.0.0.3:6379%2Bp,b" +
				"&sentinel_username=sen&sentinel_password=" + spw + "&read_from=replica-random&failover_wait=2s&sentinel_timeout=500ms",
			"yaml": `
shards:
  - {name: a, sentinel: {master: master-a}}
  - {addr: "10.0.0.3:6379", name: p}
  - {name: b, sentinel: {}}
sentinel:
  addrs: [10.0.9.1:26379, 10.0.9.2:26379]
  username: sen
  password: ` + spw + `
  read_from: replica-random
  failover_wait: 2s
  timeout: 500ms
pool: {username: app, password: ` + pw + `}
`,
			"json": `{"shards": [{"name": "a", "sentinel": {"master": "master-a"}}, {"addr": "10.0.0.3:6379", "name": "p"}, {"name": "b", "sentinel": {}}],
 "sentinel": {"addrs": ["10.0.9.1:26379", "10.0.9.2:26379"], "username": "sen", "password": "` + spw + `",
  "read_from": "replica-random", "failover_wait": "2s", "timeout": "500ms"},
 "pool": {"username": "app", "password": "` + pw + `"}}`,
		}},
		{"migration", migCfg, map[string]string{
			"url":  "redis-ring://10.0.0.4:6379?from=redis-ring://10.0.0.1:6379,10.0.0.2:6379?names=a,b",
			"yaml": "shards: [{addr: '10.0.0.4:6379'}]\nmigration: {from: 'redis-ring://10.0.0.1:6379,10.0.0.2:6379?names=a,b'}\n",
		}},
		{"migration with addrs", migAddrs, map[string]string{
			"yaml": "shards: [{addr: '10.0.0.4:6379'}]\nmigration:\n  from: redis-ring://10.0.0.1:6379,10.0.0.2:6379?names=a,b\n  addrs: {'10.0.0.4:6379': '10.1.0.4:6379'}\n",
			"json": `{"shards": [{"addr": "10.0.0.4:6379"}], "migration": {"from": "redis-ring://10.0.0.1:6379,10.0.0.2:6379?names=a,b", "addrs": {"10.0.0.4:6379": "10.1.0.4:6379"}}}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.want.Validate(); err != nil {
				t.Fatalf("the Config itself: %v", err)
			}
			checkNoSecret(t, "the Config", tc.want, pw, spw)
			for form, text := range tc.forms {
				var got shard.Config
				var err error
				if form == "url" {
					got, err = shard.ParseURL(text)
				} else {
					got, err = shard.ParseConfig([]byte(text))
				}
				if err != nil {
					t.Errorf("%s: %v", form, err)
					continue
				}
				if w, g := comparable(tc.want), comparable(got); !reflect.DeepEqual(w, g) {
					t.Errorf("%s: got\n%#v\nwant\n%#v", form, g, w)
				}
				checkNoSecret(t, form, got, pw, spw)
			}
		})
	}
}

// comparable is c with what two equal configurations may write otherwise
// made alike: no mode is ring, an empty list is none, a TLS config is its
// minimum version, server name and number of certificates.
func comparable(c shard.Config) any {
	if c.Mode == "" {
		c.Mode = shard.ModeRing
	}
	if len(c.Seeds) == 0 {
		c.Seeds = nil
	}
	if len(c.Shards) == 0 {
		c.Shards = nil
	}
	tlsOf := func(tc *tls.Config) string {
		if tc == nil {
			return "off"
		}
		return fmt.Sprintf("min %x name %q certs %d", tc.MinVersion, tc.ServerName, len(tc.Certificates))
	}
	type view struct {
		C                shard.Config
		PoolTLS, SentTLS string
		ShardTLS         []string
		From             any
		MigAddrs         map[string]string
	}
	v := view{PoolTLS: tlsOf(c.Pool.TLSConfig), SentTLS: tlsOf(c.Sentinel.TLSConfig)}
	c.Pool.TLSConfig, c.Sentinel.TLSConfig = nil, nil
	if len(c.Sentinel.Addrs) == 0 {
		c.Sentinel.Addrs = nil
	}
	shards := make([]shard.SentinelShard, len(c.Sentinel.Shards))
	for i, s := range c.Sentinel.Shards {
		v.ShardTLS = append(v.ShardTLS, tlsOf(s.TLSConfig))
		s.TLSConfig = nil
		if len(s.Addrs) == 0 {
			s.Addrs = nil
		}
		shards[i] = s
	}
	c.Sentinel.Shards = shards
	if len(shards) == 0 {
		c.Sentinel.Shards = nil
	}
	if m := c.Migration; m != nil {
		v.From, v.MigAddrs = comparable(*m.From), m.Addrs
		c.Migration = nil
	}
	v.C = c
	return v
}

// checkNoSecret checks String, fmt's verbs and JSON of c for the
// passwords.
func checkNoSecret(t *testing.T, what string, c shard.Config, secrets ...string) {
	t.Helper()
	js, err := json.Marshal(c)
	if err != nil {
		t.Errorf("%s: JSON: %v", what, err)
	}
	for _, out := range []string{c.String(), c.GoString(), fmt.Sprintf("%v %+v %#v %s %q %d %x", c, c, c, c, c, c, c), string(js)} {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s: a description shows a password: %s", what, out)
			}
		}
	}
}

// A file's TLS client key is read, used and never shown: not in String,
// fmt or JSON, nor in the error of a key that does not match.
func TestReview17FileTLSKeyNotShown(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	keyBody := strings.Split(string(keyPEM), "\n")[1] // a line of the key's base64
	file := fmt.Sprintf("shards: [{addr: '10.0.0.1:6379'}]\npool: {tls: {cert_file: %q, key_file: %q, ca_file: %q, server_name: redis.internal}}\n", certFile, keyFile, certFile)
	cfg, err := shard.ParseConfig([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if tc := cfg.Pool.TLSConfig; tc == nil || len(tc.Certificates) != 1 || tc.ServerName != "redis.internal" || tc.RootCAs == nil {
		t.Fatalf("TLS config %v: want the certificate, its CA and the server name", tc)
	}
	checkNoSecret(t, "TLS config", cfg, keyBody)
	// A key that is not the certificate's: refused, without the key.
	_, otherKey := selfSigned(t)
	if err := os.WriteFile(keyFile, otherKey, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = shard.ParseConfig([]byte(file))
	if err == nil || !strings.Contains(err.Error(), "pool.tls") || strings.Contains(err.Error(), strings.Split(string(otherKey), "\n")[1]) {
		t.Fatalf("mismatched key: %v, want ErrBadConfig naming pool.tls without the key", err)
	}
}

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redis.internal"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}
