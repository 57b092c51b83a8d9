package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// A node that sends its SCAN pages a byte every 2 s (seconds for each)
// ends shardis verify and shardis reshard with a failure naming the node
// and the timeout, within the read timeout and a margin, not a hang.
func TestReview15TrickledScanEndsVerifyAndReshard(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	for i := range 5 {
		if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	px := redistest.StartTrickleProxy(t, servers[0].Addr, 2*time.Second, func(cmd string, _ []byte) bool { return cmd == "SCAN" })
	from := "redis-ring://" + px.Addr + "?names=a&read_timeout=500ms"
	to := "redis-ring://" + servers[1].Addr + "?names=b&read_timeout=500ms"
	const bound = 5 * time.Second
	for _, args := range [][]string{
		{"verify", "--config", from},
		{"reshard", "--from", from, "--to", to, "--yes", "--allow-unnamed", "--quiet", "--timeout", "500ms"},
	} {
		t.Run(args[0], func(t *testing.T) {
			type result struct {
				code        int
				out, errOut string
			}
			done := make(chan result, 1)
			start := time.Now()
			go func() {
				var out, errOut bytes.Buffer
				env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}
				code := run(context.Background(), env, args)
				done <- result{code, out.String(), errOut.String()}
			}()
			select {
			case r := <-done:
				took := time.Since(start)
				t.Logf("exit %d after %v; stderr: %s", r.code, took, r.errOut)
				if r.code == 0 || took > bound {
					t.Errorf("exit %d after %v, want a failure within %v", r.code, took, bound)
				}
				if !strings.Contains(r.errOut, px.Addr) || !strings.Contains(r.errOut, "timeout") {
					t.Errorf("stderr does not name the node %s and the timeout: %s", px.Addr, r.errOut)
				}
			case <-time.After(time.Minute):
				t.Fatalf("still running after a minute")
			}
		})
	}
}
