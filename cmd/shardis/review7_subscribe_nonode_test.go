package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// With no node of the ring reachable at the start (a mistyped address,
// every server stopped), "shardis subscribe" printed the error and waited
// for a node forever, so a script got no exit status; it now exits 1 with
// the error. One shard down and others up still keeps it going
// (TestReview7SubscribeCLIWithOneShardDown).
func TestReview7SubscribeCLIExitsWhenNoNodeAnswers(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	url := fmt.Sprintf("redis-ring://%s,%s", servers[0].Addr, servers[1].Addr)
	for _, s := range servers {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"--url", url, "chan-a", "chan-b"},
		{"--url", url, "--pattern", "pat:*"},
		{"--url", url, "--sharded", "schan"},
	} {
		t.Run(strings.Join(args[2:], " "), func(t *testing.T) {
			out, errOut := &lockedBuffer{}, &lockedBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			env := &cliEnv{stdin: strings.NewReader(""), stdout: out, stderr: errOut}
			done := make(chan int, 1)
			go func() { done <- run(ctx, env, append([]string{"subscribe"}, args...)) }()
			select {
			case code := <-done:
				if code != 1 {
					t.Errorf("exit %d, want 1; stderr: %s", code, errOut)
				}
				if e := errOut.String(); !strings.Contains(e, servers[0].Addr) && !strings.Contains(e, servers[1].Addr) {
					t.Errorf("stderr names no node: %q", e)
				}
			case <-time.After(20 * time.Second):
				cancel()
				<-done
				t.Fatalf("still running 20 s after start with no node reachable; stderr: %s", errOut)
			}
		})
	}
}
