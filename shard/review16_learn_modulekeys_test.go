package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lastKeyModule is a Redis module (moduleCPrelude) with one command,
// LASTKEY.TOUCH [option ...] key, which replies OK. It registers the
// legacy key triple (1, 1, 1) with getkeys-api: COMMAND INFO gives a key
// spec "the key is argument 1", while the server finds the keys with the
// module's own code, which names the last argument.
const lastKeyModule = moduleCPrelude + `int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
	(void)argv; (void)argc;
	initAPI(ctx);
	SetModuleAttribs(ctx, "lastkey", 1, 1);
	return CreateCommand(ctx, "lastkey.touch", cmd, "write getkeys-api", 1, 1, 1);
}
`

// buildLastKeyModule compiles lastKeyModule (buildModule).
func buildLastKeyModule(t *testing.T) string {
	t.Helper()
	return buildModule(t, "lastkey", lastKeyModule)
}

// r16Holder returns the index of the server that holds key.
func r16Holder(t *testing.T, servers []*redistest.Server, key string) int {
	t.Helper()
	at := -1
	for i, s := range servers {
		n, err := s.Do("EXISTS", key)
		require.NoError(t, err)
		if n == "1" {
			require.Equal(t, -1, at, "%s on two servers", key)
			at = i
		}
	}
	require.NotEqual(t, -1, at, "%s on no server", key)
	return at
}

// TestReview16LearnedModuleKeysNotGuessed: a module command whose keys the
// module's own code finds (getkeys-api: COMMAND INFO says "movablekeys"
// and gives the legacy key triple as its spec) is not routed by that
// spec. Checked against COMMAND GETKEYS on its first call only, the spec
// agreed for that call's shape (LASTKEY.TOUCH key), and a later call of
// another shape (LASTKEY.TOUCH option key) went to the shard of its
// option, not of its key. Such a command fails with ErrUnknownCommand,
// saying to name its key with DoKey, which sends it to the key's shard.
func TestReview16LearnedModuleKeysNotGuessed(t *testing.T) {
	ctx := context.Background()
	so := buildLastKeyModule(t)
	servers := redistest.StartNTB(t, 3, redistest.Options{Args: []string{"--loadmodule", so}})
	c := newClient(t, ringConfig(servers))

	key := "r16modkeys:key"
	_, err := c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	keyAt := r16Holder(t, servers, key)
	option := keyElsewhere(ctx, t, c, servers, "r16modkeys:opt", keyAt)

	// The first call's shape: spec and COMMAND GETKEYS agree.
	_, firstErr := c.Do(ctx, "LASTKEY.TOUCH", key)
	for _, s := range servers {
		_, err := s.Do("CONFIG", "RESETSTAT")
		require.NoError(t, err)
	}
	_, err = c.Do(ctx, "LASTKEY.TOUCH", option, key)
	if err == nil {
		for i, s := range servers {
			want := "0"
			if i == keyAt {
				want = "1"
			}
			assert.Equal(t, want, commandCalls(t, s, "lastkey.touch"), "LASTKEY.TOUCH %s %s on server %d (the key is on %d)", option, key, i, keyAt)
		}
	} else {
		assert.True(t, errors.Is(err, shard.ErrUnknownCommand), "LASTKEY.TOUCH %s %s: %v", option, key, err)
		assert.True(t, errors.Is(firstErr, shard.ErrUnknownCommand), "the first call ran (%v), routed by the spec", firstErr)
		assert.Contains(t, err.Error(), "DoKey")
	}

	// DoKey sends it where its key is.
	for _, s := range servers {
		_, err := s.Do("CONFIG", "RESETSTAT")
		require.NoError(t, err)
	}
	_, err = c.DoKey(ctx, key, "LASTKEY.TOUCH", option, key)
	require.NoError(t, err)
	assert.Equal(t, "1", commandCalls(t, servers[keyAt], "lastkey.touch"))
}
