package main

import (
	"bytes"
	"errors"
	"flag"
	"strconv"
	"strings"
	"testing"
)

// FuzzReview20FlagWordsRedacted: a command line holding a URL or a
// user:password@host word, written as a flag's value (with '=' or after
// a space, to a flag of any kind) or as a word after the flags, never
// shows the password on stdout, on stderr or in the error; a usage error
// matches errUsage.
func FuzzReview20FlagWordsRedacted(f *testing.F) {
	f.Add(uint8(0), uint8(0), "redis-ring", "app", "s3cr3t-pw", "127.0.0.1:6379?x=1")
	f.Add(uint8(1), uint8(1), "rediss-cluster", "", "p@ss?w0rd", "[::1]:7000")
	f.Add(uint8(2), uint8(2), "", "u", "pw\"with quotes\"", "h:1")
	f.Add(uint8(3), uint8(3), "redis-ring+sentinel", "u", "pw:://x", "h:1?shards=a&sentinel_password=y")
	f.Add(uint8(4), uint8(0), "x", "u", "tab\there", "h:1")
	flags := []string{"n", "d", "b", "s"}
	f.Fuzz(func(t *testing.T, flagSel, form uint8, scheme, user, pw, rest string) {
		if len(pw) < 6 {
			return
		}
		word := user + ":" + pw + "@" + rest
		if scheme != "" {
			word = scheme + "://" + word
		}
		name := flags[int(flagSel)%len(flags)]
		var args []string
		switch form % 4 {
		case 0:
			args = []string{"--" + name, word}
		case 1:
			args = []string{"-" + name + "=" + word}
		case 2:
			args = []string{word}
		default:
			args = []string{"--s", "x", word, "--n", "1"}
		}
		var out, errOut bytes.Buffer
		env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		fs.SetOutput(&errOut)
		fs.Usage = func() { fs.Output().Write([]byte("Usage: cmd [--n N] [--d D] [--b] [--s S]\n")) }
		fs.Int("n", 0, "a number")
		fs.Duration("d", 0, "a duration")
		fs.Bool("b", false, "a bool")
		fs.String("s", "", "a string")
		err := parseFlags(env, fs, args, true)
		shown := out.String() + errOut.String()
		if err != nil {
			shown += err.Error()
			if !errors.Is(err, errUsage) && !errors.Is(err, errHelp) {
				t.Fatalf("%q: error %v is not a usage error", args, err)
			}
		}
		// Only a password that nothing shown but the word's user info spells
		// is checked.
		fixed := "Usage: cmd [--n N] [--d D] [--b] [--s S]\ninvalid value boolean for flag -n -d -b -s: parse error unexpected argument (flags go before it) xxxxx ?... help (see 'shardis cmd -h') --n --d --b --s flag needs an argument: not defined: bad flag syntax: invalid boolean value for"
		q := strconv.Quote(pw)
		for _, form := range []string{pw, q[1 : len(q)-1]} {
			if strings.Contains(fixed, form) || strings.Contains(redactArg(word), form) || strings.Contains(strconv.Quote(redactArg(word)), form) || strings.Contains(form, "@") {
				return
			}
		}
		for _, form := range []string{pw, q[1 : len(q)-1]} {
			if strings.Contains(shown, form) {
				t.Fatalf("%q: the password is shown:\n%s", args, shown)
			}
		}
	})
}
