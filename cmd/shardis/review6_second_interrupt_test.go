package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// review6ArgsEnv carries the arguments of main for the re-executed test
// binary (separated by the unit separator, 0x1f).
const review6ArgsEnv = "SHARDIS_REVIEW6_MAIN_ARGS"

// TestReview6MainHelper is not a test: the re-executed test binary runs
// main with the arguments of review6ArgsEnv here.
func TestReview6MainHelper(t *testing.T) {
	args := os.Getenv(review6ArgsEnv)
	if args == "" {
		t.Skip("only run re-executed by TestReview6SecondInterruptEndsTheProcess")
	}
	os.Args = append([]string{"shardis"}, strings.Split(args, "\x1f")...)
	main()
}

// main caught SIGINT and SIGTERM for the whole run, so once a command was
// interrupted, every further Ctrl-C was swallowed: a command that took
// long to stop (bench e2e waiting out replies from a frozen server) could
// not be ended from the keyboard. The first signal asks the command to
// stop; the next one ends the process.
func TestReview6SecondInterruptEndsTheProcess(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := writeConfig(t, "shards: [{addr: \""+servers[0].Addr+"\", name: a}, {addr: \""+servers[1].Addr+"\", name: b}]\n"+
		"pool: {read_timeout: 60s}\n")
	if err := servers[1].Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { servers[1].Resume() })

	cmd := exec.Command(os.Args[0], "-test.run=^TestReview6MainHelper$")
	cmd.Env = append(os.Environ(), review6ArgsEnv+"="+strings.Join([]string{"bench", "e2e", "--config", cfg, "--duration", "30s"}, "\x1f"))
	// The plan line on standard output comes just before the run.
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	planned := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), "about") {
				seen = true
				close(planned)
			}
		}
		exited <- cmd.Wait()
	}()
	// Then its set-up writes keys on both servers: once some are on the
	// running one, the others wait on the frozen one.
	begun := time.Now()
	for wrote := false; !wrote; {
		select {
		case <-planned:
			n, err := servers[0].Do("DBSIZE")
			wrote = err == nil && n != "0"
		case err := <-exited:
			t.Fatalf("the bench ended before it started: %v\nstderr:\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if !wrote && time.Since(begun) > 2*time.Minute {
			cmd.Process.Kill()
			<-exited
			t.Fatalf("the bench did not start within 2 minutes\nstderr:\n%s", stderr.String())
		}
	}
	// Ctrl-C pressed again and again, as a user does.
	first := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Logf("signal: %v", err)
		}
		select {
		case <-exited:
			if took := time.Since(first); took > 5*time.Second {
				t.Errorf("the process ended %v after the first of repeated Ctrl-Cs, want well under 5s (the run's clean-up gives the frozen server 10s)\nstderr:\n%s", took.Round(time.Millisecond), stderr.String())
			}
			return
		case <-tick.C:
		}
		if time.Since(first) > 2*time.Minute {
			cmd.Process.Kill()
			<-exited
			t.Fatalf("repeated Ctrl-Cs did not end the process in 2 minutes\nstderr:\n%s", stderr.String())
		}
	}
}
