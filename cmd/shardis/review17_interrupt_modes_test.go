package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// An interrupt (Ctrl-C, SIGTERM) of a dry run, --arm, --finish or
// --clear-fence ended with the bare "shardis reshard: context canceled":
// only the move itself said that it was interrupted. Each now says so,
// and a dry run that nothing moved.
func TestReview17InterruptedReshardModesSaySo(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	for i := 0; i < 50; i++ {
		if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	cases := []struct {
		flag string
		want []string
	}{
		{"--dry-run", []string{"interrupted", "nothing moved"}},
		{"--arm", []string{"interrupted"}},
		{"--finish", []string{"interrupted"}},
		{"--clear-fence", []string{"interrupted"}},
	}
	for _, tc := range cases {
		t.Run(tc.flag, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // interrupted at once
			var out, errOut strings.Builder
			args := []string{"reshard", "--from", from, "--to", to, "--quiet", tc.flag}
			if tc.flag == "--dry-run" || tc.flag == "--arm" {
				args = append(args, "--allow-unnamed") // refused by --finish and --clear-fence, which do not read it
			}
			code := run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, args)
			if code != 130 { // interrupted (errInterrupted), not failed
				t.Errorf("exit %d, want 130\nstderr: %s", code, errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if n := strings.Count(strings.TrimSpace(errOut.String()), "\n"); n != 0 {
				t.Errorf("want one line on stderr:\n%s", errOut.String())
			}
			if a, b := review17DBSize(t, servers[0]), review17DBSize(t, servers[1]); a != 50 || b != 0 {
				t.Errorf("%d keys on a, %d on b; want 50 and 0", a, b)
			}
		})
	}
}

// An interrupted verify exits 130 (interrupted, not 3: no node failed to answer), and says that it was
// interrupted rather than only "context canceled".
func TestReview17InterruptedVerifySaysSo(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut strings.Builder
	code := run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut},
		[]string{"verify", "--config", "redis-ring://" + srv.Addr})
	if code != 130 || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("exit %d, want 130 (interrupted) and a word that it was interrupted\nstderr: %s", code, errOut.String())
	}
}
