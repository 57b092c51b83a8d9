package peers

import (
	"bufio"
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

// startFakes starts n fakeredis processes, one per node, as the masters
// of a simulated cluster when clustered, and returns their addresses.
// They stop when the test ends (their standard input is closed).
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
	addrs := make([]string, n)
	for i, p := range ports {
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
		// One thread of Go code per fake: three fakes and the client share
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
					tb.Errorf("fakeredis on port %s: %v", p, err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				tb.Errorf("fakeredis on port %s did not stop", p)
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
				tb.Fatalf("fakeredis on port %s: %v", p, err)
			}
		case <-time.After(30 * time.Second):
			tb.Fatalf("fakeredis on port %s: not ready after 30 s", p)
		}
		addrs[i] = "127.0.0.1:" + p
	}
	return addrs
}
