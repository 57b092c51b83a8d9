package shard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// moduleCPrelude begins the C source of the test modules, which are
// written against the module API's function table without redismodule.h:
// the types and API functions they share, their command (it replies OK
// and, asked for its keys with getkeys-api, names its last argument), and
// initAPI, which fills the API functions in from the table in ctx, as
// RedisModule_Init does. It holds no '%' (a source may go through
// fmt.Sprintf).
const moduleCPrelude = `#include <stddef.h>
#include <stdint.h>
typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleString RedisModuleString;
typedef int (*CmdFunc)(RedisModuleCtx *, RedisModuleString **, int);
static int (*GetApi)(const char *, void *);
static void (*SetModuleAttribs)(RedisModuleCtx *, const char *, int, int);
static int (*CreateCommand)(RedisModuleCtx *, const char *, CmdFunc, const char *, int, int, int);
static int (*IsKeysPositionRequest)(RedisModuleCtx *);
static void (*KeyAtPos)(RedisModuleCtx *, int);
static int (*ReplyWithSimpleString)(RedisModuleCtx *, const char *);
static int cmd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
	(void)argv;
	if (IsKeysPositionRequest(ctx)) { KeyAtPos(ctx, argc - 1); return 0; }
	return ReplyWithSimpleString(ctx, "OK");
}
static void initAPI(RedisModuleCtx *ctx) {
	GetApi = (int (*)(const char *, void *))((void **)ctx)[0];
	GetApi("RedisModule_SetModuleAttribs", (void **)&SetModuleAttribs);
	GetApi("RedisModule_CreateCommand", (void **)&CreateCommand);
	GetApi("RedisModule_IsKeysPositionRequest", (void **)&IsKeysPositionRequest);
	GetApi("RedisModule_KeyAtPos", (void **)&KeyAtPos);
	GetApi("RedisModule_ReplyWithSimpleString", (void **)&ReplyWithSimpleString);
}
`

// buildModule compiles the C source of a Redis module called name and
// returns the shared object's path. Without a C compiler the test is
// skipped, except in CI (CI set), where make test installs one.
func buildModule(t *testing.T, name, source string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no C compiler (cc) to build the test module: make deps installs gcc")
		}
		t.Skip("no C compiler to build the test module")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, name+".c")
	require.NoError(t, os.WriteFile(src, []byte(source), 0o600))
	so := filepath.Join(dir, name+".so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src).CombinedOutput()
	require.NoError(t, err, "building the module: %s", out)
	return so
}

// commandCalls returns how many calls of cmd (lower case) s ran since its
// stats were reset, from INFO commandstats.
func commandCalls(t *testing.T, s *redistest.Server, cmd string) string {
	t.Helper()
	info, err := s.Do("INFO", "commandstats")
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
			n, _, _ := strings.Cut(rest, ",")
			return n
		}
	}
	return "0"
}

// keyElsewhere writes keys prefix0, prefix1, ... through c until one
// lands on another server than the one at index keyAt, and returns it.
func keyElsewhere(ctx context.Context, t *testing.T, c *shard.Client, servers []*redistest.Server, prefix string, keyAt int) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		cand := fmt.Sprintf("%s%d", prefix, i)
		_, err := c.Do(ctx, "SET", cand, "v")
		require.NoError(t, err)
		if r16Holder(t, servers, cand) != keyAt {
			return cand
		}
	}
	t.Fatal("no option on another shard than the key")
	return ""
}
