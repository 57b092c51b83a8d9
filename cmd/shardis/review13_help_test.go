package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// "shardis" alone is a usage error (status 2): its help went to stdout,
// where a script reads data, and nothing to stderr.
func TestReview13NoCommandIsAUsageErrorOnStderr(t *testing.T) {
	code, out, errOut := runCLI(t, "")
	if code != 2 || out != "" || !strings.Contains(errOut, "Usage: shardis <command>") {
		t.Fatalf("exit %d, want 2 with the usage on stderr only\nstdout: %q\nstderr: %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "--help")
	if code != 0 || errOut != "" || !strings.Contains(out, "Usage: shardis <command>") {
		t.Fatalf("--help: exit %d, want 0 with the usage on stdout\nstdout: %q\nstderr: %q", code, out, errOut)
	}
}

// Help asked for ("-h", "--help") is the command's output: it goes to
// stdout, so that "shardis reshard --help | grep rate" works, as
// "shardis --help" and "shardis bench --help" did; only a wrong flag
// prints the usage on stderr, with status 2.
func TestReview13HelpOnStdout(t *testing.T) {
	commands := [][]string{{"reshard"}, {"verify"}, {"locate"}, {"slot"}, {"nodes"}, {"stats"},
		{"subscribe"}, {"demo"}, {"bench", "placement"}, {"bench", "e2e"}}
	for _, cmd := range commands {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			for _, h := range []string{"-h", "--help"} {
				code, out, errOut := runCLI(t, "", append(cmd, h)...)
				if code != 0 || errOut != "" || !strings.Contains(out, "\n  -") {
					t.Errorf("%s %s: exit %d, want 0 with the flags on stdout; %d bytes on stdout, %d on stderr", name, h, code, len(out), len(errOut))
				}
			}
			code, out, errOut := runCLI(t, "", append(cmd, "--no-such-flag")...)
			if code != 2 || out != "" || !strings.Contains(errOut, "no-such-flag") {
				t.Errorf("%s --no-such-flag: exit %d, want 2 with the error on stderr only\nstdout: %q\nstderr: %q", name, code, out, errOut)
			}
		})
	}
}

// Every flag that a command line of README.md and docs/*.md gives to
// shardis is one that the command defines (its -h lists it).
func TestReview13DocumentedFlagsExist(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	line := regexp.MustCompile(`^(?:go run \./cmd/)?shardis (reshard|verify|locate|slot|nodes|stats|subscribe|demo|bench placement|bench e2e)((?: .*)?)$`)
	flagRE := regexp.MustCompile(`(?:^|\s|\[|\|)--([a-z][a-z0-9-]*)`)
	defined := map[string]map[string]bool{}
	checked := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for n := 1; sc.Scan(); n++ {
			m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
			if m == nil {
				continue
			}
			cmd := m[1]
			if _, ok := defined[cmd]; !ok {
				defined[cmd] = helpFlags(t, cmd)
			}
			text, _, _ := strings.Cut(m[2], "#") // the comment is prose
			for _, fm := range flagRE.FindAllStringSubmatch(text, -1) {
				checked++
				if !defined[cmd][fm[1]] {
					t.Errorf("%s:%d: shardis %s has no flag --%s", f, n, cmd, fm[1])
				}
			}
		}
		fh.Close()
	}
	if checked < 20 {
		t.Fatalf("only %d documented flags found: the pattern misses the command lines", checked)
	}
}

// helpFlags returns the flags that "shardis CMD -h" lists.
func helpFlags(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	args := append(strings.Fields(cmd), "-h")
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("shardis %s -h: exit %d\n%s%s", cmd, code, out, errOut)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(out+errOut, -1) {
		flags[m[1]] = true
	}
	if len(flags) == 0 {
		t.Fatalf("shardis %s -h lists no flags:\n%s%s", cmd, out, errOut)
	}
	return flags
}

// "shardis help reshard" printed the list of commands, not reshard's
// help, while the list says to run "shardis <command> -h": it is that.
func TestReview13HelpCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"help", "reshard"}, "Usage: shardis reshard --from OLD", 0},
		{[]string{"help", "bench", "e2e"}, "Usage: shardis bench e2e", 0},
		{[]string{"help", "bench"}, "Usage: shardis bench placement [flags]", 0},
		{[]string{"help"}, "Commands:", 0},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) || errOut != "" {
			t.Errorf("%v: exit %d, want %d with %q on stdout\nstdout: %q\nstderr: %q", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, "", "help", "nosuch")
	if code != 2 || out != "" || !strings.Contains(errOut, `unknown command "nosuch"`) {
		t.Errorf("help nosuch: exit %d, want 2 naming it on stderr\nstdout: %q\nstderr: %q", code, out, errOut)
	}
}
