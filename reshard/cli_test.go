package reshard_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shardis CLI, built once per test binary by the first test that
// runs it (TestMain removes it).
var cli struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// shardisCLI builds cmd/shardis (with -race when the tests run under it)
// and returns the path of the binary.
func shardisCLI(t *testing.T) string {
	t.Helper()
	cli.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			cli.err = fmt.Errorf("the go command, to build the shardis CLI: %w", err)
			return
		}
		if cli.dir, cli.err = os.MkdirTemp("", "shardis-cli-"); cli.err != nil {
			return
		}
		cli.path = filepath.Join(cli.dir, "shardis")
		args := []string{"build", "-o", cli.path}
		if raceDetector {
			args = append(args, "-race")
		}
		cmd := exec.Command(goBin, append(args, "./cmd/shardis")...)
		cmd.Dir = ".." // the module's root: tests run in the package's directory
		if out, err := cmd.CombinedOutput(); err != nil {
			cli.err = fmt.Errorf("go build ./cmd/shardis: %w\n%s", err, out)
		}
	})
	require.NoError(t, cli.err)
	return cli.path
}

// removeCLI deletes the CLI that shardisCLI built, if any.
func removeCLI() {
	if cli.dir != "" {
		_ = os.RemoveAll(cli.dir)
	}
}

// testRand returns a random source whose seed is logged, and taken from
// SHARDIS_TEST_SEED when set, so that a failing run can be repeated.
func testRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SHARDIS_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "SHARDIS_TEST_SEED")
		seed = v
	}
	t.Logf("random seed %d (SHARDIS_TEST_SEED=%d repeats this run)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// killCLIMoverAtRandom runs `shardis reshard --from --to` and SIGKILLs the
// process once the nodes of to that are not in from (the shards a grow
// adds; there must be one) hold at least a random number of keys more
// than when it started, between 1 and 80 % of those that move (rng
// chooses; the seed is logged). It watches the servers, not the CLI's
// progress, which is a line every 10 s when stderr is not a terminal. It
// returns how many keys those nodes had gained when the signal went.
func killCLIMoverAtRandom(t *testing.T, rng *rand.Rand, fromURL, toURL string) int64 {
	t.Helper()
	bin := shardisCLI(t)
	from, to := mustParse(t, fromURL), mustParse(t, toURL)
	dry, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	require.Positive(t, dry.Moved)
	target := 1 + rng.Int64N(max(dry.Moved*8/10, 1))
	t.Logf("the mover is killed once it has moved %d of %d keys", target, dry.Moved)

	var added []string // the nodes of to alone
	for _, s := range to.Shards {
		if !slices.ContainsFunc(from.Shards, func(f ring.Shard) bool { return f.Addr == s.Addr }) {
			added = append(added, s.Addr)
		}
	}
	require.NotEmpty(t, added, "no node of %s is new", toURL)
	keys := func() int64 {
		var n int64
		for _, a := range added {
			c, err := redis.Dial("tcp", a)
			require.NoError(t, err)
			size, err := redis.Int64(c.Do("DBSIZE"))
			c.Close()
			require.NoError(t, err)
			n += size
		}
		return n
	}
	before := keys()

	cmd := exec.Command(bin, "reshard", "--from", fromURL, "--to", toURL, "--rate", "1500/s", "--yes")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killedAt := int64(-1)
	deadline := time.Now().Add(120 * time.Second)
	for killedAt < 0 {
		if moved := keys() - before; moved >= target {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			killedAt = moved
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the mover was not killed mid-way (it ended first: %v)\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("the mover did not move %d keys within 120 s:\n%s", target, out.String())
		}
	}
	err = <-exited
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out.String())
	assert.Equal(t, "signal: killed", ee.Error(), "the mover died of the SIGKILL")
	t.Logf("mover (pid %d) SIGKILLed after %d moved keys", cmd.Process.Pid, killedAt)
	return killedAt
}

// runCLIMover runs `shardis reshard --from --to --yes` to its end and
// returns its standard output; it must exit 0.
func runCLIMover(t *testing.T, fromURL, toURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, shardisCLI(t), "reshard", "--from", fromURL, "--to", toURL, "--yes", "--quiet")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "shardis reshard:\n%s%s", stdout.String(), stderr.String())
	return stdout.String()
}
