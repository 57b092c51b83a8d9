package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keywordModuleSource is a Redis module (moduleCPrelude) with one
// command, <name>.TOUCH arg ..., which replies OK. It is registered with
// getkeys-api, the module's own code naming the last argument as the key,
// and then given a key spec "the argument after KEY" whose flags are the
// second format argument: RW|update, plus variable_flags when the server
// is to prefer the module's code to the spec.
const keywordModuleSource = moduleCPrelude + `typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct { int version; size_t sizeof_historyentry; size_t sizeof_keyspec; size_t sizeof_arg; } InfoVersion;
typedef struct { const char *since; const char *changes; } HistoryEntry;
typedef struct {
	const char *notes; uint64_t flags; int begin_search_type;
	union { struct { int pos; } index; struct { const char *keyword; int startfrom; } keyword; } bs;
	int find_keys_type;
	union { struct { int lastkey; int keystep; int limit; } range; struct { int keynumidx; int firstkey; int keystep; } keynum; } fk;
} KeySpec;
typedef struct { const char *name; int type; int key_spec_index; const char *token; const char *summary; const char *since; int flags; const char *deprecated_since; void *subargs; const char *display_text; } Arg;
typedef struct {
	const InfoVersion *version; const char *summary; const char *complexity; const char *since;
	HistoryEntry *history; const char *tips; int arity; KeySpec *key_specs; Arg *args;
} CommandInfo;
static const InfoVersion infoVersion = {1, sizeof(HistoryEntry), sizeof(KeySpec), sizeof(Arg)};
static RedisModuleCommand *(*GetCommand)(RedisModuleCtx *, const char *);
static int (*SetCommandInfo)(RedisModuleCommand *, const CommandInfo *);
static KeySpec specs[2];
int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
	(void)argv; (void)argc;
	initAPI(ctx);
	GetApi("RedisModule_GetCommand", (void **)&GetCommand);
	GetApi("RedisModule_SetCommandInfo", (void **)&SetCommandInfo);
	SetModuleAttribs(ctx, "%[1]s", 1, 1);
	if (CreateCommand(ctx, "%[1]s.touch", cmd, "write getkeys-api", 0, 0, 0) != 0) return 1;
	specs[0].flags = %[2]s;
	specs[0].begin_search_type = 3;
	specs[0].bs.keyword.keyword = "KEY";
	specs[0].bs.keyword.startfrom = 1;
	specs[0].find_keys_type = 2;
	specs[0].fk.range.lastkey = 0;
	specs[0].fk.range.keystep = 1;
	specs[0].fk.range.limit = 0;
	CommandInfo info = {0};
	info.version = &infoVersion;
	info.arity = -2;
	info.key_specs = specs;
	return SetCommandInfo(GetCommand(ctx, "%[1]s.touch"), &info);
}
`

// buildKeywordModule compiles keywordModuleSource for module name with
// the spec flags given as C (buildModule).
func buildKeywordModule(t *testing.T, name, flags string) string {
	t.Helper()
	return buildModule(t, name, fmt.Sprintf(keywordModuleSource, name, flags))
}

// serverKeys returns the keys COMMAND GETKEYS on s finds in args.
func serverKeys(t *testing.T, s *redistest.Server, args ...any) []string {
	t.Helper()
	conn, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	defer conn.Close()
	keys, err := redis.Strings(conn.Do("COMMAND", append([]any{"GETKEYS"}, args...)...))
	require.NoError(t, err)
	return keys
}

// TestReview17LearnedModuleKeywordSpec: a module command registered with
// getkeys-api that also declares a keyword key spec. The server finds its
// keys with the spec when the spec's flags are reliable, and with the
// module's code when the spec says variable_flags; the client learned the
// command from the spec either way, checked against COMMAND GETKEYS on
// the first call only (KEY key, where both agree). A call of another
// shape (KEY option key) must run on the shard of the key the server's
// COMMAND GETKEYS names, or fail with ErrUnknownCommand saying to use
// DoKey.
func TestReview17LearnedModuleKeywordSpec(t *testing.T) {
	for _, tc := range []struct{ name, flags string }{
		{"kwspec", "(1 << 1) | (1 << 5)"},
		{"kwvar", "(1 << 1) | (1 << 5) | (1 << 10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			so := buildKeywordModule(t, tc.name, tc.flags)
			servers := redistest.StartNTB(t, 3, redistest.Options{Args: []string{"--loadmodule", so}})
			c := newClient(t, ringConfig(servers))
			cmd := strings.ToUpper(tc.name) + ".TOUCH"

			key := "r17kw:key"
			_, err := c.Do(ctx, "SET", key, "v")
			require.NoError(t, err)
			keyAt := r16Holder(t, servers, key)
			option := keyElsewhere(ctx, t, c, servers, "r17kw:opt", keyAt)

			_, firstErr := c.Do(ctx, cmd, "KEY", key)
			args := []any{"KEY", option, key}
			want := serverKeys(t, servers[0], append([]any{cmd}, args...)...)
			require.Len(t, want, 1, "COMMAND GETKEYS %s %v", cmd, args)
			wantAt := r16Holder(t, servers, want[0])
			for _, s := range servers {
				_, err := s.Do("CONFIG", "RESETSTAT")
				require.NoError(t, err)
			}
			_, err = c.Do(ctx, cmd, args...)
			if err == nil {
				for i, s := range servers {
					n := "0"
					if i == wantAt {
						n = "1"
					}
					assert.Equal(t, n, commandCalls(t, s, strings.ToLower(cmd)), "%s %v on server %d (COMMAND GETKEYS finds %q, on %d)", cmd, args, i, want, wantAt)
				}
				return
			}
			assert.True(t, errors.Is(err, shard.ErrUnknownCommand), "%s %v: %v", cmd, args, err)
			assert.True(t, errors.Is(firstErr, shard.ErrUnknownCommand), "the first call ran (%v), routed by the spec", firstErr)
			assert.Contains(t, err.Error(), "DoKey")

			// DoKey sends it where its key is.
			for _, s := range servers {
				_, err := s.Do("CONFIG", "RESETSTAT")
				require.NoError(t, err)
			}
			_, err = c.DoKey(ctx, want[0], cmd, args...)
			require.NoError(t, err)
			assert.Equal(t, "1", commandCalls(t, servers[wantAt], strings.ToLower(cmd)))
		})
	}
}
