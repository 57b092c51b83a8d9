package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReshardDoesNotPromptOnDevNull runs reshard with its stdin on
// /dev/null, as under systemd (StandardInput=null), in a container without
// a terminal, or from cron: /dev/null is a character device, but no one
// can answer a prompt there, so the move must run without asking.
func TestReshardDoesNotPromptOnDevNull(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s?names=b", servers[1].Addr)
	_, err := servers[0].Do("SET", "k", "v")
	require.NoError(t, err)

	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: null, stdout: &out, stderr: &errOut}
	code := run(context.Background(), env, []string{"reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet"})
	require.Equal(t, 0, code, errOut.String())
	assert.NotContains(t, errOut.String(), "[y/N]", "no prompt without a terminal")
	v, err := servers[1].Do("GET", "k")
	require.NoError(t, err)
	assert.Equal(t, "v", v, "the key moved")
}
