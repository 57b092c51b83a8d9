package main

import (
	"errors"
	"flag"
	"fmt"
)

// errHelp ends a command whose flags asked for help: the flag package has
// printed the usage, and the command exits 0.
var errHelp = errors.New("help shown")

// parseFlags parses a command's args with fs. -h and --help print the
// usage and return errHelp; a bad flag is a usage error. With noArgs a
// word after the flags is one too: Go's flag package stops at the first
// word that is no flag, and the flags after it would be dropped without a
// word (a --dry-run among them).
func parseFlags(fs *flag.FlagSet, args []string, noArgs bool) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if noArgs && fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (flags go before it)", errUsage, fs.Arg(0))
	}
	return nil
}
