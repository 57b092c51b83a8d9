package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// TestReview11FailedCommandNamesThePackageOnce: a command that fails
// prints "shardis VERB: " and then the error, whose own "shardis: " (and
// that of the library errors it wraps) is not repeated: it printed
// "shardis nodes: shardis: cluster discovery: ..." and "shardis stats:
// probe: ... the first with: shardis: node ...".
func TestReview11FailedCommandNamesThePackageOnce(t *testing.T) {
	redistest.Require(t)
	gone := redistest.StartTB(t, redistest.Options{})
	addr := gone.Addr
	if err := gone.Stop(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ring := write("ring.yaml", "shards: [{addr: '"+addr+"'}]\npool: {dial_timeout: 2s}\n")
	clusterCfg := write("cluster.yaml", "mode: cluster\nseeds: ['"+addr+"']\npool: {dial_timeout: 2s}\n")
	missing := filepath.Join(dir, "missing.yaml")
	dial := "dial " + addr + ": dial tcp " + addr
	for _, tt := range []struct {
		args  []string
		words []string
	}{
		{[]string{"nodes", "--config", clusterCfg}, []string{"cluster discovery: ", "\nseed " + addr + ": " + dial}},
		{[]string{"nodes", "--config", missing}, []string{"bad config: ", "missing.yaml"}},
		{[]string{"verify", "--config", ring}, []string{"node " + addr + ": " + dial, "(check incomplete)"}},
		{[]string{"stats", "--config", ring, "--ops", "2"}, []string{"probe: 4 of 4 commands failed, the first with: node " + addr + ": " + dial}},
		{[]string{"subscribe", "--config", ring, "ch"}, []string{"subscribe: node " + addr + ": " + dial}},
		{[]string{"demo", "--config", ring, "--keys", "3"}, []string{"node " + addr + ": " + dial}},
		{[]string{"reshard", "--from", missing, "--to", ring}, []string{"--from: bad config: "}},
		{[]string{"reshard", "--from", ring, "--to", clusterCfg, "--yes"}, []string{"cluster discovery: ", "\nseed " + addr + ": " + dial}},
		{[]string{"locate", "--shards", addr + "," + addr, "k"}, []string{"usage: bad shard list: entry 1"}},
	} {
		t.Run(strings.Join(tt.args[:2], " "), func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			t.Logf("exit %d, stderr:\n%s", code, errOut)
			if code == 0 {
				t.Fatal("the command did not fail")
			}
			head := "shardis " + tt.args[0] + ": "
			i := strings.LastIndex(errOut, head)
			if i < 0 {
				t.Fatalf("stderr has no line starting with %q", head)
			}
			if i > 0 && errOut[i-1] != '\n' {
				t.Errorf("%q does not start a line", head)
			}
			msg := errOut[i+len(head):]
			if strings.HasPrefix(msg, "shardis") {
				t.Errorf("%q repeats the package after %q", msg, head)
			}
			if n := strings.Count(errOut, "shardis:"); n != 0 {
				t.Errorf("\"shardis:\" appears %d times after %q in %q: the package is named by %q already", n, head, msg, head)
			}
			for _, w := range tt.words {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lost the context %q", msg, w)
				}
			}
		})
	}
}
