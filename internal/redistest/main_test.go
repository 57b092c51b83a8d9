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
// on the system whose command line names a configuration file written by
// these tests (which would catch a process the registry lost track of).
func leftovers() error {
	if pids := RunningPIDs(); len(pids) > 0 {
		return fmt.Errorf("redis-server processes still running: %v", pids)
	}
	confs := startedConfs()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cmdline := string(data)
		for _, conf := range confs {
			if strings.Contains(cmdline, conf) {
				return fmt.Errorf("process %s still runs with %s", filepath.Dir(p), conf)
			}
		}
	}
	return nil
}
