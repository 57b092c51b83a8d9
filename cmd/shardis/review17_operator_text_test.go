package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// review17Fill writes n keys to s.
func review17Fill(t *testing.T, s *redistest.Server, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := s.Do("SET", fmt.Sprintf("%s%d", prefix, i), "v"); err != nil {
			t.Fatal(err)
		}
	}
}

// --finish on a migration that was never armed refused (status 1) for
// the misplaced keys, and said "the fence stays": there was no fence.
func TestReview17FinishNeverArmedSaysNoFence(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	review17Fill(t, servers[0], "fin", 200)
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--finish")
	if code != 1 || !strings.Contains(errOut, "does not own them") {
		t.Fatalf("exit %d, want 1 naming misplaced keys\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if strings.Contains(errOut, "fence stays") || !strings.Contains(errOut, "no fence is up") {
		t.Errorf("want the error to say that no fence is up, not that it stays\nstderr: %s", errOut)
	}
	if n := review17DBSize(t, servers[1]); n != 0 {
		t.Errorf("%d keys on the new node: --finish moved keys", n)
	}
}

// The first progress line of a paced move, before any key has moved,
// showed an ETA of a fraction of a second: the rate came from the keys
// that stay, scanned in the first instants, over those instants.
func TestReview17FirstProgressLineHasNoETA(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const keys = 600
	review17Fill(t, servers[0], "eta", keys)
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--allow-unnamed", "--yes", "--rate", "150")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	var lines []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "reshard: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 {
		t.Fatalf("want a first and a last progress line\nstderr: %s", errOut)
	}
	if !strings.HasSuffix(lines[0], "ETA --") {
		t.Errorf("first progress line %q: want no ETA (ETA --) before the rate is known", lines[0])
	}
}

// demo and nodes printed Go's bare "Usage of demo:" for -h, without the
// command line that every other command's help starts with.
func TestReview17DemoAndNodesHelpHaveAUsageLine(t *testing.T) {
	for _, cmd := range []string{"demo", "nodes"} {
		code, out, errOut := runCLI(t, "", cmd, "-h")
		if code != 0 || !strings.HasPrefix(out, "Usage: shardis "+cmd+" ") || strings.Contains(out, "Usage of") || !strings.Contains(out, "--config") {
			t.Errorf("%s -h: exit %d\nstdout: %s\nstderr: %s", cmd, code, out, errOut)
		}
		code, out, errOut = runCLI(t, "", "help", cmd)
		if code != 0 || !strings.HasPrefix(out, "Usage: shardis "+cmd+" ") {
			t.Errorf("help %s: exit %d\nstdout: %s\nstderr: %s", cmd, code, out, errOut)
		}
	}
	_, out, _ := runCLI(t, "", "help")
	for _, cmd := range []string{"demo", "nodes"} {
		if !strings.Contains(out, "\n  "+cmd+" ") {
			t.Errorf("shardis help does not list %s:\n%s", cmd, out)
		}
	}
}

// --rate took any positive pace, 1e-300 keys/s included: a move that
// never moves a key. Below 1 key/s or 1KB/s is now a usage error that
// says the minimum.
func TestReview17RateBelowTheMinimumIsAUsageError(t *testing.T) {
	for _, rate := range []string{"1e-300", "0.5", "0.999/s", "1e-300MB/s", "1023B", "0.5KB/s", "1023b/s"} {
		code, out, errOut := runCLI(t, "", "reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:1,127.0.0.1:2", "--rate", rate)
		if code != 2 || !strings.Contains(errOut, "at least") {
			t.Errorf("--rate %s: exit %d, want 2 with the minimum\nstdout: %s\nstderr: %s", rate, code, out, errOut)
		}
	}
	for _, c := range []struct {
		in          string
		keys, bytes float64
	}{{"1", 1, 0}, {"1/s", 1, 0}, {"1KB", 0, 1024}, {"1024B/s", 0, 1024}, {"0.001MB", 0, 0.001 * 1048576}} {
		keys, bytes, err := parseRate(c.in)
		if err != nil || keys != c.keys || bytes != c.bytes {
			t.Errorf("%q: %v keys/s, %v bytes/s, %v; want %v, %v", c.in, keys, bytes, err, c.keys, c.bytes)
		}
	}
}
