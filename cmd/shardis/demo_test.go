package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDemoOnEmbeddedServers(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}
	code := run(context.Background(), env, []string{"demo", "--keys", "3000", "--batch", "500"})
	require.Equal(t, 0, code, "stderr: %s", errOut.String())
	text := out.String()
	assert.Contains(t, text, "Wrote 3000 keys")
	assert.Contains(t, text, "(0 failed)")
	for _, s := range []string{"shard-a", "shard-b", "shard-c"} {
		assert.Contains(t, text, s)
	}
	// After shard-b stops, only its keys fail.
	assert.Regexp(t, `shard-a\s+ok\s+\d+\s+failed\s+0\n`, text)
	assert.Regexp(t, `shard-b\s+ok\s+0\s+failed\s+[1-9]\d*\n`, text)
	assert.Regexp(t, `shard-c\s+ok\s+\d+\s+failed\s+0\n`, text)
	assert.Contains(t, text, "shard-b (127.0.0.1:")
}

func TestDemoRejectsBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}
	assert.Equal(t, 2, run(context.Background(), env, []string{"demo", "--keys", "0"}))
	assert.Equal(t, 2, run(context.Background(), env, []string{"demo", "--config", "/no/such/file.yaml"}), "a config that cannot be read is a usage error")
}
