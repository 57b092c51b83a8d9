package main

import (
	"strings"
	"testing"
)

// A mistyped flag or a value of the wrong kind printed the command's
// whole usage (up to 45 lines for bench e2e) before the one line that
// said what was wrong, which scrolled out of a terminal or buried it in
// a log. It is now that one line on stderr, naming the flag and where
// the flags are described, with status 2.
func TestReview21BadFlagIsOneLine(t *testing.T) {
	cmds := [][]string{{"demo"}, {"locate"}, {"nodes"}, {"reshard"}, {"slot"}, {"stats"}, {"subscribe"}, {"verify"},
		{"bench", "placement"}, {"bench", "e2e"}}
	for _, cmd := range cmds {
		name := strings.Join(cmd, " ")
		for _, bad := range [][]string{{"--no-such-flag"}, {"--no-such-flag=1"}} {
			code, out, errOut := runCLI(t, "", append(cmd, bad...)...)
			if code != 2 || out != "" {
				t.Errorf("%s %s: exit %d, stdout %q; want 2 and none", name, bad[0], code, out)
			}
			line := strings.TrimSuffix(errOut, "\n")
			if strings.Contains(line, "\n") || !strings.Contains(line, "-no-such-flag") || !strings.Contains(line, "shardis "+name+" -h") {
				t.Errorf("%s %s: want one line naming the flag and 'shardis %s -h':\n%s", name, bad[0], name, errOut)
			}
		}
	}
	// A value of the wrong kind, for flags of every kind.
	for _, c := range []struct {
		flag string
		args []string
	}{
		{"-batch", []string{"reshard", "--batch", "many"}},
		{"-max-block", []string{"reshard", "--max-block", "5"}},
		{"-dry-run", []string{"reshard", "--dry-run=perhaps"}},
		{"-samples", []string{"verify", "--samples", "1.5"}},
		{"-interval", []string{"stats", "--interval", "fast"}},
		{"-duration", []string{"bench", "e2e", "--duration", "-"}},
		{"-keys", []string{"demo", "--keys", "1e3"}},
	} {
		code, out, errOut := runCLI(t, "", c.args...)
		line := strings.TrimSuffix(errOut, "\n")
		if code != 2 || out != "" || strings.Contains(line, "\n") || !strings.Contains(line, c.flag) {
			t.Errorf("%q: exit %d, stdout %q; want 2, none and one line naming %s:\n%s", c.args, code, out, c.flag, errOut)
		}
	}
}
