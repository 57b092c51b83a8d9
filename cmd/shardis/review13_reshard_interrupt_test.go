package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// An interrupted reshard (Ctrl-C, SIGTERM) ended with the bare
// "shardis reshard: context canceled", and its last progress line in a
// log read "done in ...": someone on call could not tell that the move
// had stopped short, nor that running the same command again resumes it.
func TestReview13ReshardInterruptSaysHowToResume(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	const keys = 400
	for i := 0; i < keys; i++ {
		if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Interrupted at its first progress line, paced so that it cannot
	// have finished by then.
	errW := &cancelOnWrite{mark: "reshard: ", cancel: cancel}
	var stdout strings.Builder
	code := run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: errW},
		[]string{"reshard", "--from", from, "--to", to, "--allow-unnamed", "--rate", "50"})
	errOut := errW.buf.String()
	if errW.canceled.IsZero() {
		t.Fatalf("no progress line; exit %d\nstderr: %s", code, errOut)
	}
	if code != 130 { // interrupted (errInterrupted), not failed
		t.Errorf("exit %d, want 130\nstderr: %s", code, errOut)
	}
	if !strings.Contains(errOut, "interrupted") || !strings.Contains(errOut, "run the same command again") {
		t.Errorf("the error does not say that the move stopped and how to resume it:\n%s", errOut)
	}
	if strings.Contains(errOut, "done in") {
		t.Errorf("an interrupted move's progress says done:\n%s", errOut)
	}

	// Run again, it finishes the move.
	code, out, errOut2 := runCLI(t, "", "reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet")
	if code != 0 || !strings.Contains(out, "0 misplaced") {
		t.Fatalf("the second run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut2)
	}
	a, err := servers[0].Do("DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	b, err := servers[1].Do("DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	var na, nb int
	fmt.Sscan(a, &na)
	fmt.Sscan(b, &nb)
	if na+nb != keys || nb == 0 {
		t.Errorf("after the second run: %d keys on a, %d on b; want %d in all, some on b", na, nb, keys)
	}
}
