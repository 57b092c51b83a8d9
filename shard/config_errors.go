package shard

import (
	"errors"
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

// FieldError is the cause of a config file's error that one field's value
// (or a field not known) makes: errors.As finds it in an error of
// ParseConfig or LoadConfig, which matches ErrBadConfig too. Its text is
// the message without the "shardis: bad config: " prefix; it never
// quotes a secret.
type FieldError struct {
	// Field is the field's path in the file's terms: "pool.max_idle",
	// "shards[1].weight", "pool.tls.key_file", "migration.from_file";
	// empty for the document as a whole.
	Field string
	// Err describes the problem.
	Err error
}

func (e *FieldError) Error() string { return e.Err.Error() }

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }

// badFieldf is badConfigf for a problem of one field: the error's cause
// is a FieldError of field, which a %w operand's cause then follows. The
// message names the field itself.
func badFieldf(field, format string, args ...any) error {
	ce := badConfigf(format, args...).(*configError)
	return &configError{msg: ce.msg, cause: &FieldError{Field: field, Err: &causedText{msg: ce.msg, cause: ce.cause}}}
}

// causedText is a message with the error that caused it (nil for none).
type causedText struct {
	msg   string
	cause error
}

func (e *causedText) Error() string { return e.msg }
func (e *causedText) Unwrap() error { return e.cause }

// atField makes err, a problem of the field at path, a FieldError, unless
// it already is one (of a field deeper in the file).
func atField(path string, err error) error {
	var fe *FieldError
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return &FieldError{Field: path, Err: err}
}
