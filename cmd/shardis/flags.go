package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/shardis/shardis/internal/addrkey"
)

// errHelp ends a command whose flags asked for help: the flag package has
// printed the usage, and the command exits 0.
var errHelp = errors.New("help shown")

// parseFlags parses a command's args with fs, whose output is the
// command's stderr. -h and --help print the usage on env.stdout (the help
// asked for is the command's output, as "shardis --help" prints it) and
// return errHelp; a bad flag is a usage error, in one line that points
// to -h (the usage is not printed: it buried that line). With
// noArgs a word after the flags is one too: Go's flag package stops at
// the first word that is no flag, and the flags after it would be dropped
// without a word (a --dry-run among them).
func parseFlags(env *cliEnv, fs *flag.FlagSet, args []string, noArgs bool) error {
	stderr := fs.Output()
	var usage bytes.Buffer
	fs.SetOutput(&usage)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, werr := env.stdout.Write(usage.Bytes())
			if werr != nil {
				return werr
			}
			return errHelp
		}
		// One line, the flag package's own: the whole usage before it
		// (45 lines for bench e2e) scrolled it out of sight. The flag
		// package quotes a value it cannot parse: a URL given to a flag
		// that takes a number (its own value left out) would be shown
		// with its password.
		hide := redactFlagValues(args)
		return fmt.Errorf("%w: %s (see 'shardis %s -h')", errUsage, dashDash.ReplaceAllString(hide.Replace(err.Error()), "$1 --$2"), fs.Name())
	}
	if noArgs && fs.NArg() > 0 {
		// The word may be a URL meant for a flag: it is quoted without
		// its user info.
		return fmt.Errorf("%w: unexpected argument %q (flags go before it)", errUsage, redactArg(fs.Arg(0)))
	}
	return nil
}

// dashDash names the flag in the flag package's errors ("for flag -x",
// "for -x", "not defined: -x", "needs an argument: -x") as the usage, the
// docs and the commands' own errors write it: "--timeout", not
// "-timeout".
var dashDash = regexp.MustCompile(`\b(for|flag|defined:|argument:) -([^-\s])`)

// redactFlagValues returns a replacer of every word of args, and of
// the name and the value of a -name=value word, that redactArg would change, as it is
// and as %q quotes it, by its redacted form.
func redactFlagValues(args []string) *strings.Replacer {
	var pairs []string
	for _, a := range args {
		words := []string{a}
		if strings.HasPrefix(a, "-") {
			// -name=value: the flag package quotes either part alone.
			name, v, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			words = append(words, name, v)
		}
		for _, w := range words {
			if r := redactArg(w); r != w {
				q := strconv.Quote(w)
				pairs = append(pairs, q[1:len(q)-1], redactArg(w), w, redactArg(w))
			}
		}
	}
	return strings.NewReplacer(pairs...)
}

// redactArg returns a command-line word as it may be printed: a URL (a
// word with "://", such as a --config or --from value) without its user
// info and with "?..." for its options, which may hold a password
// (sentinel_password, from=URL); another word without what comes before
// its last '@' (user:password@host:port).
func redactArg(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return addrkey.Redact(s)
	}
	// The last '@' of the whole rest: an unencoded '?' in a password
	// puts part of it after the first '?'.
	rest = addrkey.Redact(rest)
	if hosts, _, hasQuery := strings.Cut(rest, "?"); hasQuery {
		rest = hosts + "?..."
	}
	return scheme + "://" + rest
}
