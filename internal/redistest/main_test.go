package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a redis-server started by the tests is
// still running afterwards, or when goroutines leaked.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := leftovers(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			code = 1
		}
	}
	StopAll()
	os.Exit(code)
}

// leftovers reports servers still known to the registry, and any process
// on the system whose working directory is the directory of a server
// these tests started (which would catch a process the registry lost
// track of; redis-server rewrites its command line, so that cannot be
// used).
func leftovers() error {
	if pids := RunningPIDs(); len(pids) > 0 {
		return fmt.Errorf("redis-server processes still running: %v", pids)
	}
	dirs := make(map[string]bool)
	for _, d := range startedDirs() {
		dirs[d] = true
		if real, err := filepath.EvalSymlinks(d); err == nil {
			dirs[real] = true
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		cwd, err := os.Readlink(p)
		cwd = strings.TrimSuffix(cwd, " (deleted)")
		if err == nil && dirs[cwd] {
			return fmt.Errorf("process %s still runs in %s", filepath.Base(filepath.Dir(p)), cwd)
		}
	}
	return nil
}
