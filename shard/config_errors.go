package shard

import (
	"fmt"
	"strings"
)

// configError is a configuration problem. Its message starts with
// "shardis: bad config: " once, whatever it wraps, and it matches both
// ErrBadConfig and its cause (a ring or pool sentinel, an *os.PathError...).
type configError struct {
	msg   string
	cause error
}

func (e *configError) Error() string { return ErrBadConfig.Error() + ": " + e.msg }

func (e *configError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrBadConfig}
	}
	return []error{ErrBadConfig, e.cause}
}

// badConfigf returns a configError with a formatted message. A %w verb
// makes its operand the cause; the operand's own "shardis: " prefix (and a
// "bad config: " after it) is dropped from the text, so that prefixes never
// repeat.
func badConfigf(format string, args ...any) error {
	var cause error
	for i, a := range args {
		if err, ok := a.(error); ok {
			if cause == nil {
				cause = err
			}
			args[i] = plainMessage(err)
		}
	}
	return &configError{msg: fmt.Sprintf(strings.ReplaceAll(format, "%w", "%s"), args...), cause: cause}
}

// plainMessage is err's text without the library's own prefixes.
func plainMessage(err error) string {
	s := err.Error()
	for _, p := range []string{"shardis: ", "bad config: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
