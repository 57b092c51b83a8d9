package shard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// writeConfig writes a config file into a fresh directory.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shardis.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFileTLS drives the file's pool.tls block (ca_file, cert_file,
// key_file, server_name) end to end against TLS servers that require a
// client certificate, and checks that each part is actually used.
func TestConfigFileTLS(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{TLS: true, TLSClientAuth: true})
	f := servers[0].TLS
	file := func(tlsBlock string) string {
		return fmt.Sprintf("shards:\n  - {addr: %q}\n  - {addr: %q}\npool:\n  dial_timeout: 5s\n  read_timeout: 5s\n  tls:\n%s",
			servers[0].Addr, servers[1].Addr, tlsBlock)
	}
	full := fmt.Sprintf("    ca_file: %s\n    cert_file: %s\n    key_file: %s\n    server_name: localhost\n", f.CAFile, f.ClientCertFile, f.ClientKeyFile)

	cfg, err := shard.LoadConfig(writeConfig(t, file(full)))
	if err != nil {
		t.Fatal(err)
	}
	if tc := cfg.Pool.TLSConfig; tc == nil || tc.ServerName != "localhost" || tc.RootCAs == nil || len(tc.Certificates) != 1 {
		t.Fatalf("TLS config not filled in from the file: %+v", tc)
	}
	c := newClient(t, cfg)
	for i := range 40 {
		if _, err := c.Do(ctx, "SET", fmt.Sprintf("tlsfile:%d", i), i); err != nil {
			t.Fatal(err)
		}
	}
	// Both servers were reached over TLS.
	for _, s := range servers {
		n, err := s.Do("DBSIZE")
		if err != nil || n == "0" {
			t.Errorf("%s holds %s keys (%v)", s.Addr, n, err)
		}
	}
	if v, err := redis.Int(c.Do(ctx, "GET", "tlsfile:7")); err != nil || v != 7 {
		t.Fatalf("GET = %d, %v", v, err)
	}

	// Each field matters: without the client certificate the server
	// refuses the handshake; with a server name the certificate does not
	// cover, or without the CA, the client refuses the server.
	for _, tc := range []struct{ name, block string }{
		{"no client certificate", fmt.Sprintf("    ca_file: %s\n    server_name: localhost\n", f.CAFile)},
		{"wrong server name", fmt.Sprintf("    ca_file: %s\n    cert_file: %s\n    key_file: %s\n    server_name: redis.example.com\n", f.CAFile, f.ClientCertFile, f.ClientKeyFile)},
		{"system roots only", fmt.Sprintf("    cert_file: %s\n    key_file: %s\n    server_name: localhost\n", f.ClientCertFile, f.ClientKeyFile)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := shard.LoadConfig(writeConfig(t, file(tc.block)))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Health.Interval = -1
			c := newClient(t, cfg)
			_, err = c.Do(ctx, "SET", "tlsfile:x", 1)
			var ne *shard.NodeError
			if !errors.As(err, &ne) {
				t.Fatalf("err = %v, want a *shard.NodeError", err)
			}
		})
	}

	// Files that cannot work fail when loaded, naming the field.
	for _, tc := range []struct{ name, block, want string }{
		{"cert without key", fmt.Sprintf("    cert_file: %s\n", f.ClientCertFile), "pool.tls.cert_file and pool.tls.key_file go together"},
		{"missing CA file", "    ca_file: /nonexistent/ca.pem\n", "pool.tls.ca_file: open /nonexistent/ca.pem"},
		{"CA file not PEM", fmt.Sprintf("    ca_file: %s\n", writeConfig(t, "not a certificate")), "holds no PEM certificate"},
		{"key of another file", fmt.Sprintf("    cert_file: %s\n    key_file: %s\n", f.ClientCertFile, f.CAFile), "pool.tls client certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := shard.LoadConfig(writeConfig(t, file(tc.block)))
			if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadConfig saying %q", err, tc.want)
			}
		})
	}
}

// TestConfigFileCluster loads a cluster-mode file with every field of its
// cluster: block and checks the client uses them: read_from sends reads to
// the replicas, and String reports the values from the file.
func TestConfigFileCluster(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	seeds := rc.Seeds()
	text := fmt.Sprintf(`mode: cluster
seeds: [%s]
cluster:
  refresh_interval: 45s
  min_refresh_interval: 20ms
  max_redirects: 4
  max_retry_wait: 3s
  read_from: replica-random
pool:
  read_timeout: 5s
health:
  interval: 250ms
`, strings.Join(seeds, ", "))
	cfg, err := shard.LoadConfig(writeConfig(t, text))
	if err != nil {
		t.Fatal(err)
	}
	want := shard.ClusterOptions{RefreshInterval: 45e9, MinRefreshInterval: 20e6, MaxRedirects: 4, MaxRetryWait: 3e9, ReadFrom: shard.ReadReplicaRandom}
	if cfg.Mode != shard.ModeCluster || cfg.Cluster != want || len(cfg.Seeds) != len(seeds) {
		t.Fatalf("loaded %+v", cfg)
	}
	for _, s := range []string{"RefreshInterval: 45s", "MinRefreshInterval: 20ms", "MaxRedirects: 4", "MaxRetryWait: 3s", "ReadFrom: replica-random"} {
		if !strings.Contains(cfg.String(), s) {
			t.Errorf("String() = %s, lacks %s", cfg, s)
		}
	}
	c := newClient(t, cfg)
	const n = 200
	for i := range n {
		if _, err := c.Do(ctx, "SET", fmt.Sprintf("cfgfile:%d", i), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ForEachMaster(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "WAIT", 1, 5000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("cfgfile:%d", i)))
		if err != nil || v != i {
			t.Fatalf("GET cfgfile:%d = %d, %v", i, v, err)
		}
	}
	var replicaCmds int64
	for _, st := range c.Stats().Nodes {
		if st.ReadOnly {
			replicaCmds += st.Commands
		}
	}
	if replicaCmds < n {
		t.Errorf("replicas served %d commands, want the %d reads (read_from: replica-random)", replicaCmds, n)
	}

	// read_from is checked when loaded.
	_, err = shard.ParseConfig([]byte("mode: cluster\nseeds: [127.0.0.1:7000]\ncluster: {read_from: nearest}\n"))
	if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), `unknown read policy "nearest"`) {
		t.Errorf("read_from nearest: %v", err)
	}
}
