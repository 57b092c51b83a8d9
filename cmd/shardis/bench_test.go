package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/bench/placement"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchCLI runs the CLI in-process with ctx and returns the exit code and
// streams.
func benchCLI(ctx context.Context, stdin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut}
	code := run(ctx, env, args)
	return code, out.String(), errOut.String()
}

// mdSection returns the part of md after heading, up to the next heading.
func mdSection(md, heading string) string {
	i := strings.Index(md, heading)
	if i < 0 {
		return ""
	}
	rest := md[i+len(heading):]
	if j := strings.Index(rest, "\n#"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func TestBenchPlacementReport(t *testing.T) {
	dir := t.TempDir()
	strategies := placement.Strategies()
	code, out, errOut := benchCLI(context.Background(), "", "bench", "placement", "--generate", "3000",
		"--lookup-time", "2ms", "--shards", "127.0.0.1:7000:2 big,127.0.0.1:7001 small", "--report", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "100%", "progress bar")
	assert.Contains(t, out, "Placement of 3000 keys")
	assert.Contains(t, out, "Wrote "+filepath.Join(dir, "report.md"))

	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "shardis bench placement --generate 3000 --lookup-time 2ms --shards '127.0.0.1:7000:2 big,127.0.0.1:7001 small'")
	for _, layout := range []string{"3 equal", "10 equal", "100 equal", "weighted 1:2:3:4", "--shards (2)"} {
		section := mdSection(string(md), "### "+layout)
		require.NotEmpty(t, section, layout)
		for _, s := range strategies {
			rows := regexp.MustCompile(`(?m)^\| `+s+` \|`).FindAllString(section, -1)
			// Weighted layouts have a second table of shares (without the
			// skipped strategies).
			assert.NotEmpty(t, rows, "%s in %s", s, layout)
			assert.LessOrEqual(t, len(rows), 2, "%s in %s", s, layout)
		}
	}
	for _, f := range []string{"balance.svg", "movement.svg", "lookup.svg"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.True(t, bytes.HasPrefix(bytes.TrimSpace(data), []byte("<?xml")) || bytes.Contains(data[:200], []byte("<svg")), f)
		assert.Contains(t, string(md), "]("+f+")")
	}
}

func TestBenchPlacementJSON(t *testing.T) {
	code, out, errOut := benchCLI(context.Background(), "", "bench", "placement", "--generate", "2000",
		"--strategies", "murmur3,slots,jump", "--lookup-time", "1ms", "--json")
	require.Equal(t, 0, code, errOut)
	var rep placement.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout must be one JSON document")
	assert.Equal(t, 2000, rep.Keys)
	assert.Equal(t, []string{"murmur3", "slots", "jump"}, rep.Strategies)
	assert.Len(t, rep.Results, 3*4)
	res, ok := rep.Result("slots", "10 equal")
	require.True(t, ok)
	assert.Zero(t, res.Add.BetweenSurvivors)
	assert.Positive(t, res.Lookup.NsPerOp)
}

func TestBenchPlacementReadsKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.txt")
	var keys strings.Builder
	for i := range 500 {
		fmt.Fprintf(&keys, "session:%d\n", i)
	}
	require.NoError(t, os.WriteFile(file, []byte(keys.String()), 0o644))
	for _, c := range []struct {
		arg, stdin, source string
	}{
		{file, "", "read from " + file},
		{"-", keys.String(), "read from standard input"},
	} {
		code, out, errOut := benchCLI(context.Background(), c.stdin, "bench", "placement", "--keys", c.arg,
			"--strategies", "modula", "--lookup-time", "1ms", "--json")
		require.Equal(t, 0, code, errOut)
		var rep placement.Report
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		assert.Equal(t, 500, rep.Keys)
		assert.Equal(t, c.source, rep.KeySource)
	}
}

func TestBenchRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench"}, 2, "sub-command"},
		{[]string{"bench", "nope"}, 2, "unknown bench sub-command"},
		{[]string{"bench", "placement", "--keys", "f", "--generate", "5"}, 2, "not both"},
		{[]string{"bench", "placement", "--strategies", "murmur3,crc"}, 2, "unknown placement strategy"},
		{[]string{"bench", "placement", "--shards", "nohost"}, 2, "--shards"},
		{[]string{"bench", "placement", "--pattern", "user:1"}, 2, "{id}"},
		{[]string{"bench", "placement", "--generate", "-4"}, 2, "keys requested"},
		{[]string{"bench", "placement", "--lookup-time", "0s"}, 2, "--lookup-time"},
		{[]string{"bench", "placement", "extra"}, 2, "unexpected argument"},
		{[]string{"bench", "placement", "--keys", "/no/such/file"}, 2, "no such file"}, // as a config that cannot be read
		{[]string{"bench", "e2e", "--duration", "0s"}, 2, "--duration"},
		{[]string{"bench", "e2e", "--callers", "0"}, 2, "--callers"},
		{[]string{"bench", "e2e", "--callers", "", "--pipelines", "", "--multi", ""}, 2, "no cases"},
		{[]string{"bench", "e2e", "--config", "/no/such/config.yaml"}, 2, "no such file"}, // a bad config is a usage error
	} {
		code, _, errOut := benchCLI(context.Background(), "", c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	code, out, _ := benchCLI(context.Background(), "", "bench", "help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "shardis bench placement")
	code, out, _ = benchCLI(context.Background(), "", "bench", "e2e", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "--duration")
}

func TestBenchE2EOnRealServers(t *testing.T) {
	redistest.Require(t)
	dir := t.TempDir()
	code, out, errOut := benchCLI(context.Background(), "", "bench", "e2e", "--duration", "100ms",
		"--callers", "1,4", "--pipelines", "1k", "--multi", "100", "--report", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "Using real servers: 3 redis-server")
	assert.Contains(t, errOut, "100%", "progress bar")

	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	for _, c := range []string{"single c=1", "single c=4", "pipeline 1k", "MSET 100", "MGET 100"} {
		for _, mode := range []string{"ring", "cluster"} {
			rows := regexp.MustCompile(`(?m)^\| `+c+` \| `+mode+` \| .* \| 0 \|$`).FindAllString(string(md), -1)
			assert.Len(t, rows, 1, "one error-free row for %s in %s mode", c, mode)
		}
	}
	for _, f := range []string{"throughput.svg", "latency.svg"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Positive(t, st.Size())
	}
	assert.Contains(t, string(md), "redis-server 7")
	assert.Equal(t, []int(nil), redistest.RunningPIDs(), "the servers were stopped")
}

// embeddedConfig starts miniredis servers and writes a ring config file
// for them.
func embeddedConfig(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("mode: ring\nshards:\n")
	for i := range n {
		m := miniredis.RunT(t)
		fmt.Fprintf(&b, "  - addr: %s\n    name: m%d\n", m.Addr(), i)
	}
	path := filepath.Join(t.TempDir(), "ring.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func TestBenchE2EWithConfigsJSON(t *testing.T) {
	a, b := embeddedConfig(t, 2), embeddedConfig(t, 1)
	code, out, errOut := benchCLI(context.Background(), "", "bench", "e2e", "--config", a, "--config", b,
		"--duration", "50ms", "--callers", "2", "--pipelines", "", "--multi", "10", "--json")
	require.Equal(t, 0, code, errOut)
	var rep e2e.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout must be one JSON document")
	require.Len(t, rep.Targets, 2)
	assert.Equal(t, "ring", rep.Targets[0].Name)
	assert.Equal(t, "ring 2", rep.Targets[1].Name)
	assert.Contains(t, rep.Targets[0].Servers, "2 shards, murmur3 ring")
	assert.Len(t, rep.Results, 3*2)
	for _, r := range rep.Results {
		assert.Positive(t, r.Ops, r.Name)
		assert.Zero(t, r.Errors, r.FirstError)
	}
	assert.Contains(t, rep.Servers, a)
}

// cancelOnWrite is a writer that cancels a context once what was written
// to it contains mark (and keeps everything, for the test to read after
// the run).
type cancelOnWrite struct {
	buf      bytes.Buffer
	mark     string
	cancel   context.CancelFunc
	canceled time.Time
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	if w.canceled.IsZero() && strings.Contains(w.buf.String(), w.mark) {
		w.canceled = time.Now()
		w.cancel()
	}
	return n, err
}

func TestBenchE2EInterruptPrintsWhatWasMeasured(t *testing.T) {
	cfg := embeddedConfig(t, 2)
	dir := t.TempDir()
	// Interrupted once the second case has started (its progress line),
	// whatever the machine's speed: the first case has figures then.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errW := &cancelOnWrite{mark: "single c=2", cancel: cancel}
	var stdout bytes.Buffer
	code := run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: errW},
		[]string{"bench", "e2e", "--config", cfg, "--duration", "500ms", "--callers", "1,2,3,4,5", "--report", dir})
	out, errOut := stdout.String(), errW.buf.String()
	require.False(t, errW.canceled.IsZero(), "the second case never started: %s", errOut)
	assert.Less(t, time.Since(errW.canceled), 10*time.Second, "returns soon after the interruption")
	assert.Equal(t, 130, code) // interrupted (errInterrupted), not failed
	assert.Contains(t, errOut, "interrupted; printed what was measured")
	assert.Contains(t, out, "INTERRUPTED")
	// Which case the interruption cuts depends on the machine's speed:
	// every case before it has figures, it is marked cut short, and every
	// later one says it was not measured.
	var cases []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "single c=") || strings.HasPrefix(line, "pipeline ") || strings.HasPrefix(line, "MSET ") || strings.HasPrefix(line, "MGET ") {
			cases = append(cases, line)
		}
	}
	require.Len(t, cases, 11, out)
	cut := -1
	for i, line := range cases {
		if strings.Contains(line, " (cut short) ") {
			cut = i
			break
		}
	}
	require.GreaterOrEqual(t, cut, 0, "the case running at the interruption is marked: %s", out)
	for i, line := range cases {
		switch {
		case i <= cut:
			assert.Regexp(t, `ring +[0-9]+ +[0-9,]+ `, line, "a case that ran has figures")
		default:
			assert.Regexp(t, `ring +[0-9]+ +not measured$`, line, "a later case never ran")
		}
	}
	assert.Regexp(t, `(?m)^single c=5 +ring +5 +not measured$`, out, "the last cases never ran")
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "**Interrupted:**")
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"--generate":        "--generate",
		"docs/report":       "docs/report",
		"user:{id}:profile": "'user:{id}:profile'",
		"a b":               "'a b'",
		"it's":              `'it'\''s'`,
		"":                  "''",
	} {
		assert.Equal(t, want, shellQuote(in), in)
	}
}
