package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// A password in a URL given where the command did not expect it was
// printed back in the error: as an argument after the flags ("unexpected
// argument ..."), or as --config of nodes, stats, demo, locate or bench
// e2e, which took it for a file name ("open redis-ring://:pw@...: no
// such file"). Those commands now take a URL as verify and reshard do,
// and an unexpected argument is quoted without its user info.
func TestReview13PasswordsNotEchoedInErrors(t *testing.T) {
	const secret = "s3cretPW"
	// An option the URL parser refuses: the command ends at once.
	url := "redis-ring://:" + secret + "@127.0.0.1:1?no_such_option=1"
	cases := [][]string{
		{"verify", url},
		{"verify", "--config", "redis-ring://127.0.0.1:1", url},
		{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", url},
		{"nodes", "--config", url},
		{"stats", "--config", url},
		{"demo", "--config", url},
		{"bench", "e2e", "--config", url},
		{"locate", "--config", url, "k"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", code, errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the password is printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
		})
	}
}

// The commands that read a config file take a URL too, as verify and
// reshard always did: "nodes --config redis-ring://..." read a file of
// that name. The URL's password appears nowhere in what they print, nor
// in the command line that bench e2e --report quotes in its report.
func TestReview13ConfigURLEverywhere(t *testing.T) {
	const secret = "pw-s3cret-13"
	srv := redistest.StartTB(t, redistest.Options{DefaultPassword: secret})
	url := fmt.Sprintf("redis-ring://:%s@%s?names=only", secret, srv.Addr)
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string // on stdout
	}{
		{[]string{"nodes", "--config", url}, srv.Addr},
		{[]string{"locate", "--config", url, "k"}, "k\t0\tonly\n"},
		{[]string{"stats", "--config", url, "--ops", "5"}, "10 commands"},
		{[]string{"demo", "--config", url, "--keys", "50"}, "Wrote 50 keys"},
		{[]string{"bench", "e2e", "--config", url, "--duration", "100ms", "--callers", "1", "--pipelines", "", "--multi", "", "--report", dir}, "single c=1"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args[:1], " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tc.args...)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, want 0 with %q on stdout\nstdout: %s\nstderr: %s", code, tc.want, out, errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the password is printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
		})
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "--config") {
		t.Errorf("the report does not quote its command line:\n%s", md)
	}
	if strings.Contains(string(md), secret) {
		t.Errorf("the report holds the password:\n%s", md)
	}
}

// A URL pasted where the command name belongs ("shardis redis://:pw@h",
// "shardis bench redis://:pw@h") was quoted back with its password in
// "unknown command".
func TestReview13PasswordsNotEchoedAsCommandName(t *testing.T) {
	const secret = "s3cretPW"
	url := "redis-ring://:" + secret + "@127.0.0.1:1"
	for _, args := range [][]string{{url}, {"bench", url}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", code, errOut)
			}
			if !strings.Contains(errOut, "unknown") {
				t.Errorf("stderr does not say the command is unknown: %s", errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the password is printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
		})
	}
}
