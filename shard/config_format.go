package shard

import (
	"fmt"
	"io"
)

// Format prints c as String describes it, whatever the verb (GoString
// for %#v): fmt consults String only for %v, %s, %q, %x and %X, and with
// any other verb (a %d whose argument slipped) it would print every field
// as it is, the passwords among them. A verb that does not suit a string
// still says so (%!d(string=shard.Config{...})), without a secret.
func (c Config) Format(f fmt.State, verb rune) { formatDescribed(f, verb, c.String, c.GoString) }

// Format prints o as String describes it, whatever the verb (GoString for
// %#v), so that no verb prints its passwords (see Config.Format).
func (o SentinelOptions) Format(f fmt.State, verb rune) {
	formatDescribed(f, verb, o.String, o.GoString)
}

// Format prints s as String describes it, whatever the verb (GoString for
// %#v), so that no verb prints its password (see Config.Format).
func (s SentinelShard) Format(f fmt.State, verb rune) {
	formatDescribed(f, verb, s.String, s.GoString)
}

// formatDescribed prints a value by its description for fmt: goString
// for %#v, str with the verb, flags, width and precision given for every
// other verb.
func formatDescribed(f fmt.State, verb rune, str, goString func() string) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, goString())
		return
	}
	_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), str())
}
