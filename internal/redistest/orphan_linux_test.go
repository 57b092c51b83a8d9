package redistest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOrphanHelper is not a test on its own: TestNoOrphanAfterCrash runs
// it in a child process, which starts a server and dies without stopping
// it.
func TestOrphanHelper(t *testing.T) {
	if os.Getenv("SHARDIS_REDISTEST_ORPHAN") != "1" {
		t.Skip("helper for TestNoOrphanAfterCrash")
	}
	s, err := Start(Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("server", s.PID(), s.Dir)
	os.Exit(3) // no Stop, no cleanup: like a test binary that crashed
}

// TestNoOrphanAfterCrash checks that a server does not outlive the
// process that started it, even when that process dies without stopping
// it.
func TestNoOrphanAfterCrash(t *testing.T) {
	Require(t)
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SHARDIS_REDISTEST_ORPHAN=1")
	out, _ := cmd.Output()
	var pid int
	var dir string
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "server" {
			pid, _ = strconv.Atoi(f[1])
			dir = f[2]
		}
	}
	if pid == 0 {
		t.Fatalf("the helper did not start a server:\n%s", out)
	}
	defer os.RemoveAll(dir)
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			// Do not leave it behind for the rest of the machine.
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
			t.Fatalf("redis-server %d outlived the process that started it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
