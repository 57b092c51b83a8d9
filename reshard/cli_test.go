package reshard_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shardis/shardis/reshard"
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

// progressMoved reads the count of moved keys from the CLI's progress bar.
var progressMoved = regexp.MustCompile(`, (\d+) moved,`)

// scanBarLines splits the CLI's stderr at '\r' (the progress bar redraws
// its line) as well as at '\n'.
func scanBarLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// killCLIMoverAtRandom runs `shardis reshard --from --to` and SIGKILLs the
// process once its progress bar shows at least a random number of moved
// keys, between 1 and 80 % of those that move (rng chooses; the seed is
// logged). It returns how many keys the bar showed moved when the signal
// went.
func killCLIMoverAtRandom(t *testing.T, rng *rand.Rand, fromURL, toURL string) int64 {
	t.Helper()
	bin := shardisCLI(t)
	from, to := mustParse(t, fromURL), mustParse(t, toURL)
	dry, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	require.Positive(t, dry.Moved)
	target := 1 + rng.Int64N(max(dry.Moved*8/10, 1))
	t.Logf("the mover is killed once it has moved %d of %d keys", target, dry.Moved)

	cmd := exec.Command(bin, "reshard", "--from", fromURL, "--to", toURL, "--rate", "1500/s", "--yes")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var tail []string // the last lines, for the failure message
	killedAt := int64(-1)
	sc := bufio.NewScanner(stderr)
	sc.Split(scanBarLines)
	for sc.Scan() {
		line := sc.Text()
		if len(tail) == 5 {
			tail = tail[1:]
		}
		tail = append(tail, line)
		m := progressMoved.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		moved, _ := strconv.ParseInt(m[1], 10, 64)
		if moved >= target {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			killedAt = moved
			break
		}
	}
	_, _ = io.Copy(io.Discard, stderr) // until the process is gone
	err = cmd.Wait()
	require.GreaterOrEqual(t, killedAt, int64(0), "the mover was not killed mid-way (it ended first: %v)\n%s\n%s", err, tail, stdout.String())
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
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
