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
	// A shell that burns about half a second of CPU, then waits.
	cmd := exec.Command("sh", "-c", `i=0; end=$(($(date +%s)+1)); while [ $(date +%s) -lt $end ] || [ $i -lt 1000 ]; do i=$((i+1)); done; sleep 5`)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var used time.Duration
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if used = ChildrenCPU("sh"); used >= 200*time.Millisecond {
			break
		}
	}
	assert.GreaterOrEqual(t, used, 200*time.Millisecond, "the busy child's CPU time")
	assert.Zero(t, ChildrenCPU("no-such-command"))
}
