package shard_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// review20Secret is a password no other part of the inputs below spells.
const review20Secret = "Qx7-s3cr3t-Zk"

// A secret written where the config's author meant another thing (a
// scheme typed without its ':', the password itself in password_env, a
// PEM key pasted in place of its file's path, a URL given as a file) is
// refused without being quoted, by an error that matches ErrBadConfig.
func TestReview20MisplacedSecretsNotQuoted(t *testing.T) {
	const pemKey = "-----BEGIN PRIVATE KEY-----\\nMIIEv" + review20Secret + "QIBADANBg\\n-----END PRIVATE KEY-----\\n"
	shards := "shards: [{addr: '127.0.0.1:6379'}]\n"
	docs := []struct{ name, doc string }{
		{"url scheme without ':'", "url: 'redis-ring//u:" + review20Secret + "@127.0.0.1:6379?from=redis-ring://127.0.0.1:6380'\n"},
		{"url scheme with one '/'", "url: 'redis-ring:/u:" + review20Secret + "@127.0.0.1:6379?from=redis-ring://127.0.0.1:6380'\n"},
		{"migration.from scheme without ':'", shards + "migration: {from: 'redis-ring//u:" + review20Secret + "@127.0.0.1:6380?from=redis-ring://127.0.0.1:6381'}\n"},
		{"migration.from_file holding a URL", shards + "migration: {from_file: 'redis-ring://u:" + review20Secret + "@127.0.0.1:6380'}\n"},
		{"pool.password_env holding the password", shards + "pool: {password_env: '" + review20Secret + "'}\n"},
		{"sentinel.password_env holding the password", "shards: [{name: a}]\nsentinel: {addrs: ['127.0.0.1:26379'], password_env: '" + review20Secret + "'}\n"},
		{"shard sentinel password_env holding the password", "shards: [{name: a, sentinel: {master: m, addrs: ['127.0.0.1:26379'], password_env: '" + review20Secret + "'}}]\n"},
		{"pool.tls.key_file holding PEM", shards + "pool: {tls: {cert_file: /etc/hosts, key_file: \"" + pemKey + "\"}}\n"},
		{"pool.tls.cert_file holding PEM", shards + "pool: {tls: {cert_file: \"" + pemKey + "\", key_file: /etc/hosts}}\n"},
		{"sentinel.tls.key_file holding PEM", "shards: [{name: a}]\nsentinel: {addrs: ['127.0.0.1:26379'], tls: {cert_file: /etc/hosts, key_file: \"" + pemKey + "\"}}\n"},
		{"pool.password tagged !!int", shards + "pool: {password: !!int " + review20Secret + "}\n"},
		{"pool.password tagged !!float", shards + "pool: {password: !!float " + review20Secret + "}\n"},
	}
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		if strings.Contains(err.Error(), review20Secret) {
			t.Fatalf("%s: error shows the secret: %v", what, err)
		}
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Fatalf("%s: error %q does not match ErrBadConfig", what, err)
		}
	}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			_, err := shard.ParseConfig([]byte(d.doc))
			check(t, "ParseConfig", err)
			path := filepath.Join(t.TempDir(), "shardis.yaml")
			if err := os.WriteFile(path, []byte(d.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = shard.LoadConfig(path)
			check(t, "LoadConfig", err)
		})
	}
	urls := []string{
		"redis-ring//u:" + review20Secret + "@127.0.0.1:6379?from=redis-ring://127.0.0.1:6380",
		"redis-ring:u:" + review20Secret + "@127.0.0.1:6379?from=redis-ring://127.0.0.1:6380",
		"rediss-cluster:/u:" + review20Secret + "@127.0.0.1:7000?from=redis-cluster://127.0.0.1:7001",
		"redis-ring://127.0.0.1:6379?from=redis-ring//u:" + review20Secret + "@127.0.0.1:6380%3Ffrom%3Dredis-ring://x:1",
	}
	for _, raw := range urls {
		_, err := shard.ParseURL(raw)
		check(t, "ParseURL "+raw, err)
	}
}
