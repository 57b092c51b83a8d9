package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// A reshard stopped by SIGTERM or SIGINT exited 1, the status of a move
// that failed at its work: a script could not tell "stopped, run it
// again" from a failure to look at. It now exits 128 plus the signal's
// number (143, 130), as a shell reports a process the signal ended,
// after a summary of what it moved; no write stays paused on the old
// node (the DUMP/RESTORE path pauses them), no password (URL, config
// file's password_env) shows, and the same command run again finishes
// the move with every key kept.
func TestReview21ReshardSignalExitsInterrupted(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			const pw = "r21-Secret-pw-9"
			servers := redistest.StartNTB(t, 2, redistest.Options{DefaultPassword: pw})
			from := fmt.Sprintf("redis-ring://:%s@%s?names=a", pw, servers[0].Addr)
			to := writeConfig(t, fmt.Sprintf("shards: [{addr: %q, name: a}, {addr: %q, name: b}]\npool: {password_env: REVIEW21_PW}\n",
				servers[0].Addr, servers[1].Addr))
			t.Setenv("REVIEW21_PW", pw)
			const keys = 400
			for i := 0; i < keys; i++ {
				if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), "v"); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"reshard", "--from", from, "--to", to, "--allow-unnamed", "--yes", "--dump", "--timeout", "30s", "--rate", "40"}
			cmd := exec.Command(os.Args[0], "-test.run=^TestReview6MainHelper$")
			cmd.Env = append(os.Environ(), review6ArgsEnv+"="+strings.Join(args, "\x1f"))
			stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// Interrupted once keys have reached the new node, the move
			// under way (at 40 keys/s it cannot have ended): the
			// DUMP/RESTORE path pauses the old node's writes batch by
			// batch.
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(stderr.String(), "reshard: ") || dbsize(t, servers[1]) == 0 {
				select {
				case err := <-exited:
					t.Fatalf("reshard ended (%v) before its first progress line\nstdout: %s\nstderr: %s", err, stdout, stderr)
				case <-time.After(20 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					<-exited
					t.Fatalf("no progress line in 60s\nstderr: %s", stderr)
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("reshard did not stop within 60s of %v\nstderr: %s", tc.sig, stderr)
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			out, errOut := stdout.String(), stderr.String()
			if code != tc.want {
				t.Errorf("exit %d after %v, want %d\nstderr: %s", code, tc.sig, tc.want, errOut)
			}
			if !strings.Contains(errOut, "interrupted") || !strings.Contains(errOut, "run the same command again") {
				t.Errorf("stderr does not say that the move stopped and how to go on:\n%s", errOut)
			}
			if !strings.Contains(out, "scanned ") || !strings.Contains(out, "moved") {
				t.Errorf("no summary of what was moved on stdout:\n%s", out)
			}
			for _, bad := range []string{pw, "panic", "goroutine "} {
				if strings.Contains(out+errOut, bad) {
					t.Errorf("output shows %q:\nstdout: %s\nstderr: %s", bad, out, errOut)
				}
			}
			// A write on the old node answers at once: a pause left
			// behind would hold it for --timeout (30s).
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := servers[0].DoContext(ctx, "SET", "review21-after", "v"); err != nil {
				t.Fatalf("a write on the old node after the interrupt: %v (its writes left paused?)", err)
			}
			if _, err := servers[0].Do("DEL", "review21-after"); err != nil {
				t.Fatal(err)
			}

			code, out, errOut = runCLI(t, "", "reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet")
			if code != 0 || !strings.Contains(out, "0 misplaced") {
				t.Fatalf("the second run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if strings.Contains(out+errOut, pw) {
				t.Errorf("the second run shows the password:\nstdout: %s\nstderr: %s", out, errOut)
			}
			na, nb := dbsize(t, servers[0]), dbsize(t, servers[1])
			if na+nb != keys || nb == 0 {
				t.Errorf("after the second run: %d keys on a, %d on b; want %d in all, some on b", na, nb, keys)
			}
		})
	}
}

// dbsize returns the number of keys on s.
func dbsize(t *testing.T, s *redistest.Server) int {
	t.Helper()
	v, err := s.Do("DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil {
		t.Fatalf("DBSIZE %q: %v", v, err)
	}
	return n
}
