package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeConfig(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "shardis.yaml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

func TestNodesStatsAndDemoOnACluster(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	cfg := writeConfig(t, fmt.Sprintf("mode: cluster\nseeds: [%q]\n", rc.Seeds()[0]))

	code, out, errOut := runCLI(t, "", "nodes", "--config", cfg)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "0-5460")
	assert.Contains(t, out, "5461-10922")
	assert.Contains(t, out, "10923-16383")
	for _, m := range rc.Masters() {
		assert.Contains(t, out, m.Addr)
	}
	for _, r := range rc.Replicas() {
		assert.Contains(t, out, r.Addr)
	}

	code, out, errOut = runCLI(t, "", "stats", "--config", cfg, "--ops", "300")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "MOVED")
	assert.Contains(t, out, "probe: 600 commands")
	assert.Contains(t, out, ", 0 failed")

	code, out, errOut = runCLI(t, "", "demo", "--config", cfg, "--keys", "2000")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "Wrote 2000 keys")
	assert.Contains(t, out, "(0 failed)")
}

func TestNodesOnARing(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := writeConfig(t, fmt.Sprintf(`{"hash": "jedis", "shards": [{"addr": %q, "name": "a", "weight": 3}, {"addr": %q, "name": "b"}]}`,
		servers[0].Addr, servers[1].Addr))
	code, out, errOut := runCLI(t, "", "nodes", "--config", cfg)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `0\s+a\s+\S+\s+3\s+7\d\.\d%`, out, "weight 3 of 4 gets about 75%")
	assert.Regexp(t, `1\s+b\s+\S+\s+1\s+2\d\.\d%`, out)

	code, _, _ = runCLI(t, "", "nodes")
	assert.Equal(t, 2, code, "--config is required")
	code, _, _ = runCLI(t, "", "stats", "--config", "/no/such/file")
	assert.Equal(t, 2, code, "a config that cannot be read is a usage error")
}
