package command

import (
	"errors"
	"strings"
)

// ErrBadArgs means a call's arguments cannot be valid for its command:
// too few or too many for the arity, a key count that is not a number, is
// negative or points past the arguments, or a keyed command whose
// arguments hold no key. The server would refuse such a call.
var ErrBadArgs = errors.New("shardis: bad command arguments")

// ErrUnknownCommand means the table has no such command or subcommand.
var ErrUnknownCommand = errors.New("shardis: unknown command")

// ArgsError is the error KeyPositions and ChannelPositions return. It names
// the command and says what is wrong; errors.Is matches it against Err
// (ErrBadArgs or ErrUnknownCommand). It never quotes argument values.
type ArgsError struct {
	// Command is the command in upper case, "OBJECT ENCODING" for a
	// subcommand.
	Command string
	// Reason says what is wrong.
	Reason string
	// Err is ErrBadArgs or ErrUnknownCommand.
	Err error
}

// Error returns "shardis: <command>: <reason>".
func (e *ArgsError) Error() string {
	if e.Command == "" {
		return "shardis: " + e.Reason
	}
	return "shardis: " + e.Command + ": " + e.Reason
}

// Unwrap returns Err.
func (e *ArgsError) Unwrap() error { return e.Err }

func badArgs(c *Info, reason string) error {
	return &ArgsError{Command: displayName(c.Name), Reason: reason, Err: ErrBadArgs}
}

func displayName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "|", " "))
}
