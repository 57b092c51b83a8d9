package peers

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// fakeDir is the directory fakeBinary built into, "" before; TestMain
// removes it when the tests end.
var fakeDir string

// fakeBinary builds bench/fakeredis once per test process.
var fakeBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "fakeredis-")
	if err != nil {
		return "", err
	}
	fakeDir = dir
	bin := filepath.Join(dir, "fakeredis")
	// Built from its source directory, found from this file's, so that a
	// test binary run from anywhere can build it.
	_, self, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(filepath.Dir(self), "..", "fakeredis")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build fakeredis: %v\n%s", err, out)
	}
	return bin, nil
})

// fakesEach runs every fake node in a process of its own instead of all
// the nodes of a benchmark in one.
var fakesEach = flag.Bool("fakes.each", false, "run each fakeredis node in a process of its own")

// startFakes starts n fakeredis nodes, as the masters of a simulated
// cluster when clustered, and returns their addresses. They stop when
// the test ends (their standard input is closed). All n are served by one
// process (one thread of Go code), unless -fakes.each: a client's batch
// reaches the nodes at about the same time, and one process answers all
// of them after one wake-up where n processes need n, so the fakes spend
// less CPU per command and the client's own cost shows more.
func startFakes(tb testing.TB, n int, clustered bool) []string {
	tb.Helper()
	bin, err := fakeBinary()
	if err != nil {
		tb.Fatal(err)
	}
	ports := make([]string, n)
	for i := range ports {
		p, err := redistest.FreePort()
		if err != nil {
			tb.Fatal(err)
		}
		ports[i] = strconv.Itoa(p)
	}
	groups := [][]string{ports}
	if *fakesEach {
		groups = nil
		for _, p := range ports {
			groups = append(groups, []string{p})
		}
	}
	for _, group := range groups {
		p := strings.Join(group, ",")
		args := []string{"-port", p}
		if clustered {
			args = append(args, "-cluster", strings.Join(ports, ","))
		}
		cmd := exec.Command(bin, args...)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			tb.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		// One thread of Go code per process: the fakes and the client share
		// two cores, and a second one would only add scheduling.
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("fakeredis on ports %s: %v", p, err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				tb.Errorf("fakeredis on ports %s did not stop", p)
			}
		})
		ready := make(chan error, 1)
		go func() {
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err == nil && line != "ready\n" {
				err = fmt.Errorf("said %q", line)
			}
			ready <- err
			io.Copy(io.Discard, stdout)
		}()
		select {
		case err := <-ready:
			if err != nil {
				tb.Fatalf("fakeredis on ports %s: %v", p, err)
			}
		case <-time.After(30 * time.Second):
			tb.Fatalf("fakeredis on ports %s: not ready after 30 s", p)
		}
	}
	addrs := make([]string, n)
	for i, p := range ports {
		addrs[i] = "127.0.0.1:" + p
	}
	return addrs
}
