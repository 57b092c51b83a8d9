package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// Interrupted while writing, demo returned with its progress bar's line
// unfinished, so the error ("shardis demo: ... context canceled") was
// glued to the end of the bar instead of standing on a line of its own.
func TestReview6DemoInterruptedEndsTheProgressLine(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	cfg := writeConfig(t, fmt.Sprintf("shards: [{addr: %q, name: a}]\n", srv.Addr))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Interrupted once the bar has been drawn: after the first batch.
	errW := &cancelOnWrite{mark: "SET", cancel: cancel}
	var stdout strings.Builder
	code := run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: errW},
		[]string{"demo", "--config", cfg, "--keys", "100000", "--batch", "100"})
	errOut := errW.buf.String()
	if errW.canceled.IsZero() {
		t.Fatalf("the progress bar was never drawn; exit %d\nstderr:\n%q", code, errOut)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1\nstderr:\n%q", code, errOut)
	}
	if !regexp.MustCompile(`(?m)^shardis demo: .*context canceled`).MatchString(errOut) {
		t.Errorf("the error does not start a line of its own:\n%q", errOut)
	}
}
