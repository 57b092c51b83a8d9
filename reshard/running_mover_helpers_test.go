package reshard_test

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// moverResult is how a mover started by startRunningMover ended.
type moverResult struct {
	rep *reshard.Report
	err error
}

// startRunningMover sets up the tests of what is refused while a mover
// runs: it starts a mover of from -> to at 400 keys a second that
// finishes the migration, and returns once it has moved a key (it fails
// the test if the mover ends or moves nothing in 30 s first). what names
// the mover in those failures. The mover is cancelled when the test ends;
// end waits up to 60 s for it to end and returns its result.
func startRunningMover(t *testing.T, from, to shard.Config, what string) (end func() moverResult) {
	t.Helper()
	mctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	moving := make(chan struct{})
	done := make(chan moverResult, 1)
	go func() {
		var once sync.Once
		rep, err := reshard.Move(mctx, reshard.Options{From: from, To: to, SkipClientCheck: true, KeysPerSecond: 400,
			Finish: true, Progress: func(p reshard.Progress) {
				if p.Moved > 0 {
					once.Do(func() { close(moving) })
				}
			}})
		done <- moverResult{rep, err}
	}()
	select {
	case <-moving:
	case r := <-done:
		t.Fatalf("%s ended before it moved anything: %v", what, r.err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s moved nothing in 30 s", what)
	}
	return func() moverResult {
		t.Helper()
		var r moverResult
		select {
		case r = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s did not end in 60 s", what)
		}
		return r
	}
}

// runReshardCLI runs `shardis reshard` (the binary bin) from servers[0]
// (shard s0) to servers[1] (shard s1) with args added, and returns its
// output and how it ended.
func runReshardCLI(bin string, servers []*redistest.Server, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(bin, append([]string{"reshard", "--from", ringURL(servers[:1], []string{"s0"}, nil),
		"--to", ringURL(servers[1:], []string{"s1"}, nil)}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
