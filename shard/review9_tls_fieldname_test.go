package shard_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview9TLSErrorsNameTheirSection: a file has three places for a
// tls block (pool, sentinel, a Sentinel shard's sentinel), but the errors
// of all three named pool.tls: a missing CA file in the Sentinels' block
// sent the user to the data nodes' settings. Each error now names its
// own block.
func TestReview9TLSErrorsNameTheirSection(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const plain = "shards: [{addr: '127.0.0.1:6381'}]\n"
	const sent = "shards: [{name: a, sentinel: {master: m, addrs: ['127.0.0.1:26379']%s}}]\n"
	for _, tc := range []struct{ name, file, want string }{
		{"pool missing CA", plain + "pool: {tls: {ca_file: /nonexistent/ca.pem}}\n", "pool.tls.ca_file: open /nonexistent/ca.pem"},
		{"sentinel missing CA", strings.Replace(sent, "%s", "", 1) + "sentinel: {tls: {ca_file: /nonexistent/ca.pem}}\n", "sentinel.tls.ca_file: open /nonexistent/ca.pem"},
		{"shard sentinel missing CA", strings.Replace(sent, "%s", ", tls: {ca_file: /nonexistent/ca.pem}", 1), "shards[0].sentinel.tls.ca_file: open /nonexistent/ca.pem"},
		{"sentinel CA not PEM", strings.Replace(sent, "%s", "", 1) + "sentinel: {tls: {ca_file: '" + notPEM + "'}}\n", "sentinel.tls.ca_file " + notPEM + " holds no PEM certificate"},
		{"shard sentinel cert without key", strings.Replace(sent, "%s", ", tls: {cert_file: '"+notPEM+"'}", 1), "shards[0].sentinel.tls.cert_file and shards[0].sentinel.tls.key_file go together"},
		{"sentinel bad key pair", strings.Replace(sent, "%s", "", 1) + "sentinel: {tls: {cert_file: '" + notPEM + "', key_file: '" + notPEM + "'}}\n", "sentinel.tls client certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := shard.ParseConfig([]byte(tc.file))
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("ParseConfig: %v, want ErrBadConfig", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("ParseConfig: %q, want it to say %q", msg, tc.want)
			}
			if !strings.HasPrefix(tc.want, "pool") && strings.Contains(msg, "pool.tls") {
				t.Errorf("ParseConfig: %q names pool.tls for another block", msg)
			}
		})
	}
}
