package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReshardPromptEndsOnInterrupt checks that an interrupt (Ctrl-C,
// SIGTERM: the command's context ends) while reshard waits for its
// confirmation on a terminal ends the command at once with nothing moved.
// The CLI catches those signals to stop a move cleanly, so a prompt that
// ignored its context could only be left by answering it.
func TestReshardPromptEndsOnInterrupt(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s?names=b", servers[1].Addr)
	_, err := servers[0].Do("SET", "k", "v")
	require.NoError(t, err)
	_, pts := openPTY(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errOut, done := startPrompted(ctx, t, pts, from, to)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 1, code, errOut.String())
		assert.Contains(t, errOut.String(), "nothing moved")
	case <-time.After(30 * time.Second):
		pts.Close() // ends the read, so that the test's goroutine ends too
		<-done
		t.Fatal("reshard still waited for an answer 30s after the interrupt")
	}
	v, err := servers[0].Do("GET", "k")
	require.NoError(t, err)
	assert.Equal(t, "v", v, "nothing moved")
}

// TestReshardPromptAcceptsYes checks that "y" typed on the terminal
// starts the move.
func TestReshardPromptAcceptsYes(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s?names=b", servers[1].Addr)
	_, err := servers[0].Do("SET", "k", "v")
	require.NoError(t, err)
	ptmx, pts := openPTY(t)

	errOut, done := startPrompted(context.Background(), t, pts, from, to)
	_, err = ptmx.Write([]byte("y\n"))
	require.NoError(t, err)
	select {
	case code := <-done:
		require.Equal(t, 0, code, errOut.String())
	case <-time.After(30 * time.Second):
		pts.Close()
		<-done
		t.Fatal("reshard did not take the answer within 30s")
	}
	v, err := servers[1].Do("GET", "k")
	require.NoError(t, err)
	assert.Equal(t, "v", v, "the key moved")
}

// startPrompted runs reshard from -> to with stdin on terminal pts and
// returns once it asks for confirmation; done receives its exit code.
func startPrompted(ctx context.Context, t *testing.T, pts *os.File, from, to string) (errOut *lockedBuffer, done chan int) {
	t.Helper()
	out := &lockedBuffer{}
	errOut = &lockedBuffer{}
	env := &cliEnv{stdin: pts, stdout: out, stderr: errOut}
	done = make(chan int, 1)
	go func() {
		done <- run(ctx, env, []string{"reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet"})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "[y/N]") {
		select {
		case code := <-done:
			t.Fatalf("reshard ended (%d) without asking: %s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			pts.Close()
			<-done
			t.Fatalf("no prompt after 30s: %s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errOut, done
}
