package bench

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The CPU a running child spends is counted, under its own name only.
func TestChildrenCPUCountsRunningChildren(t *testing.T) {
	// A shell that burns CPU for a fixed amount of work (about a second on
	// an idle core; a loaded machine only stretches it), then waits. A
	// loop bounded by wall-clock time got as little as 90 ms of CPU on a
	// machine loaded twenty deep.
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done; sleep 60`)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var used time.Duration
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if used = ChildrenCPU("sh"); used >= 200*time.Millisecond {
			break
		}
	}
	assert.GreaterOrEqual(t, used, 200*time.Millisecond, "the busy child's CPU time")
	assert.Zero(t, ChildrenCPU("no-such-command"))
}
