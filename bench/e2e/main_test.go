package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"go.uber.org/goleak"
)

// TestMain fails the package when a test left a goroutine or a
// redis-server process behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
		if pids := redistest.RunningPIDs(); len(pids) > 0 {
			fmt.Fprintln(os.Stderr, "redis-server processes left running:", pids)
			code = 1
		}
	}
	redistest.StopAll()
	os.Exit(code)
}
