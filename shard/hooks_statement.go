package shard

import (
	"strings"
	"unicode"

	"github.com/shardis/shardis/shard/command"
)

// statement renders a command for a trace: its name and arguments
// separated by spaces, secrets replaced by "?", binary-safe (arguments
// that are not text are shown as "?"), cut at max bytes (0 or less: no
// limit) with "..." at the cut.
func statement(name string, args []any, max int) string {
	var b strings.Builder
	writeStatement(&b, name, args, max)
	return cut(b.String(), max)
}

// pipelineStatement renders the commands of calls, one per line.
func pipelineStatement(calls []*call, max int) string {
	var b strings.Builder
	for i, cl := range calls {
		if max > 0 && b.Len() > max {
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		writeStatement(&b, cl.name, cl.args, max)
	}
	return cut(b.String(), max)
}

func cut(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	if max <= 3 {
		return s[:max]
	}
	i := max - 3
	// Do not split a UTF-8 sequence.
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "..."
}

func writeStatement(b *strings.Builder, name string, args []any, max int) {
	word, exact := commandWord(name)
	switch {
	case exact && printable(name):
		b.WriteString(name)
	case word != "" && printable(word):
		// A name with white space around or in it: the server refuses it
		// as unknown, and what follows its first word may be anything
		// ("AUTH app password" given as one name).
		b.WriteString(word)
		if strings.IndexFunc(strings.TrimSpace(name), unicode.IsSpace) >= 0 {
			b.WriteString(" ?")
		}
	default:
		b.WriteByte('?')
	}
	secret := secretArgs(name, args)
	for i, a := range args {
		if max > 0 && b.Len() > max {
			return
		}
		b.WriteByte(' ')
		if secret(i) {
			b.WriteByte('?')
			continue
		}
		s, ok := command.Arg(a)
		if !ok || !printable(s) {
			b.WriteByte('?')
			continue
		}
		if max > 0 && len(s) > max {
			s = s[:max]
		}
		b.WriteString(s)
	}
}

// printable reports whether s is text that can be shown as is.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// secretArgs returns which arguments of a command carry secrets: every
// argument of AUTH, those after HELLO's AUTH and MIGRATE's AUTH/AUTH2, the
// rules of ACL SETUSER and the values of CONFIG SET.
func secretArgs(name string, args []any) func(i int) bool {
	if _, ok := misspeltSecret(name); ok {
		// A misspelt AUTH (" auth", "AUTH ", "ACL|SETUSER"): the server
		// refuses it, but which of its arguments is the password is
		// anyone's guess.
		return func(int) bool { return true }
	}
	name, _ = commandWord(name)
	switch {
	case strings.EqualFold(name, "AUTH"):
		return func(int) bool { return true }
	case strings.EqualFold(name, "HELLO"):
		return afterWord(args, "AUTH", 2)
	case strings.EqualFold(name, "MIGRATE"):
		auth := afterWord(args, "AUTH", 1)
		auth2 := afterWord(args, "AUTH2", 2)
		return func(i int) bool { return auth(i) || auth2(i) }
	case strings.EqualFold(name, "ACL"):
		if len(args) > 0 && argEquals(args[0], "SETUSER") {
			return func(i int) bool { return i >= 2 }
		}
	case strings.EqualFold(name, "CONFIG"):
		if len(args) > 0 && argEquals(args[0], "SET") {
			return func(i int) bool { return i >= 2 && i%2 == 0 }
		}
	case strings.EqualFold(name, "SENTINEL"):
		// SENTINEL SET master option value ... (auth-pass) and SENTINEL
		// CONFIG SET option value ... (sentinel-pass): every value.
		if len(args) > 0 && argEquals(args[0], "SET") {
			return func(i int) bool { return i >= 3 && i%2 == 1 }
		}
		if len(args) > 1 && argEquals(args[0], "CONFIG") && argEquals(args[1], "SET") {
			return func(i int) bool { return i >= 3 && i%2 == 1 }
		}
	}
	return func(int) bool { return false }
}

// secretCommands are the commands some of whose arguments are secrets
// (secretArgs).
var secretCommands = []string{"AUTH", "HELLO", "MIGRATE", "ACL", "CONFIG", "SENTINEL"}

// secretCommand reports whether word names one of secretCommands.
func secretCommand(word string) bool {
	for _, c := range secretCommands {
		if strings.EqualFold(word, c) {
			return true
		}
	}
	return false
}

// misspeltSecret reports whether name is not the name of one of
// secretCommands but starts as one does: with white space around or in
// it (" auth", "AUTH app password" given as one name), or with something
// glued to it after its letters ("AUTH2", "ACL|SETUSER", "config|set":
// the way INFO commandstats, ACL rules and COMMAND DOCS name a
// subcommand). The server refuses such a name as unknown and quotes the
// arguments back. It returns the secret command's word as given.
func misspeltSecret(name string) (string, bool) {
	word, exact := commandWord(name)
	if exact && secretCommand(word) {
		return "", false // well spelt: secretArgs knows its secrets
	}
	word = strings.TrimLeftFunc(word, func(r rune) bool { return !unicode.IsLetter(r) })
	if i := strings.IndexFunc(word, func(r rune) bool { return !unicode.IsLetter(r) }); i >= 0 {
		word = word[:i]
	}
	return word, secretCommand(word)
}

// commandWord returns the first word of a command name and whether the
// name is that word alone, without white space around or in it.
func commandWord(name string) (word string, exact bool) {
	f := strings.Fields(name)
	if len(f) == 0 {
		return "", false
	}
	return f[0], len(f) == 1 && f[0] == name
}

// afterWord marks the n arguments after every argument equal to word.
func afterWord(args []any, word string, n int) func(i int) bool {
	return func(i int) bool {
		for j := max(0, i-n); j < i; j++ {
			if argEquals(args[j], word) {
				return true
			}
		}
		return false
	}
}

// argEquals reports whether a is sent as word, in any case: a Stringer
// too is read by the text redigo sends for it, which the server sees.
func argEquals(a any, word string) bool {
	return strings.EqualFold(command.ArgText(a), word)
}
