// Package errtext writes the text of the library's chained errors.
//
// The rule, for every package of the module: the package prefix
// "shardis: " (for a sub-package's own errors "shardis: sentinel: " and
// the like) starts the text of an error once. A layer that wraps another
// error adds its context words and drops the prefix from the cause's text
// (Cause, Errorf), so a chain reads the way os.PathError does ("open /x:
// permission denied"): "shardis: Sentinel discovery: Sentinel shard
// shard-0: sentinel: no usable answer ...". Only the text changes: the
// wrapped errors are the same values, so errors.Is and errors.As match
// exactly what they would match without the rule.
package errtext

import (
	"fmt"
	"strings"
)

// Prefix starts the text of every error of the library.
const Prefix = "shardis: "

// Trim returns text without its leading prefix, on each of its lines (an
// errors.Join of errors has one error per line): the first of prefixes
// that starts the line, or Prefix when none is given.
func Trim(text string, prefixes ...string) string {
	if len(prefixes) == 0 {
		prefixes = []string{Prefix}
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		for _, p := range prefixes {
			if rest, ok := strings.CutPrefix(line, p); ok {
				lines[i] = rest
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// Cause returns err's text as a cause after an outer layer's context:
// without Prefix (see Trim). A nil err reads "<nil>".
func Cause(err error) string {
	if err == nil {
		return "<nil>"
	}
	return Trim(err.Error())
}

// Nested returns err's text as the cause that ends the first line of an
// error of one node or one server in a list of errors (one error per
// line, see Join): Cause, with every line after the first indented by a
// tab, so that a cause of several lines (an errors.Join) reads as the
// one error's and not as errors of its own. A nil err reads "<nil>".
func Nested(err error) string {
	return strings.ReplaceAll(Cause(err), "\n", "\n\t")
}

// Join is errors.Join under a heading, for an operation that failed on
// several nodes or servers, each with an error of its own: nil when
// every err is nil; otherwise head, then ": " and the one error, or ":"
// and each error on a line of its own, each as its Cause (head starts
// with Prefix; the errors' own texts do not repeat it). The result's
// Unwrap() []error returns the non-nil errs, in order, as errors.Join's
// does.
func Join(head string, errs ...error) error {
	var nonNil []error
	for _, err := range errs {
		if err != nil {
			nonNil = append(nonNil, err)
		}
	}
	if len(nonNil) == 0 {
		return nil
	}
	sep := ": "
	if len(nonNil) > 1 {
		sep = ":\n"
	}
	format := strings.ReplaceAll(head, "%", "%%") + sep + strings.Repeat("%w\n", len(nonNil)-1) + "%w"
	args := make([]any, len(nonNil))
	for i, err := range nonNil {
		args[i] = err
	}
	if len(nonNil) == 1 {
		// Errorf would give Unwrap() error: keep Unwrap() []error.
		w := Errorf(format, args...).(*wrapError)
		return &wrapErrors{msg: w.msg, errs: nonNil}
	}
	return Errorf(format, args...)
}

// cause formats an error operand of Errorf by its text without the first
// of prefixes that starts it (see Trim).
type cause struct {
	err      error
	prefixes []string
}

func (c cause) String() string { return Trim(c.err.Error(), c.prefixes...) }

// Errorf is fmt.Errorf with the rule of the package: every error operand
// reads as its Cause, and the text starts with Prefix once when
// fmt.Errorf's would start with it (from format or from its first
// operand). The result wraps the operands of the %w verbs exactly as
// fmt.Errorf's does.
func Errorf(format string, args ...any) error {
	return errorf([]string{Prefix}, format, args...)
}

// ErrorfIn is Errorf for the errors of a sub-package whose own errors
// start with Prefix+sub (for package sentinel, sub is "sentinel: "): an
// error operand also loses that longer prefix, which the outermost error
// of the package gives once.
func ErrorfIn(sub, format string, args ...any) error {
	return errorf([]string{Prefix + sub, Prefix}, format, args...)
}

func errorf(prefixes []string, format string, args ...any) error {
	wrapped := fmt.Errorf(format, args...)
	text := make([]any, len(args))
	for i, a := range args {
		if err, ok := a.(error); ok && err != nil {
			a = cause{err, prefixes}
		}
		text[i] = a
	}
	msg := fmt.Sprintf(strings.ReplaceAll(format, "%w", "%v"), text...)
	if strings.HasPrefix(wrapped.Error(), Prefix) && !strings.HasPrefix(msg, Prefix) {
		msg = Prefix + msg
	}
	switch u := wrapped.(type) {
	case interface{ Unwrap() []error }:
		return &wrapErrors{msg: msg, errs: u.Unwrap()}
	case interface{ Unwrap() error }:
		return &wrapError{msg: msg, err: u.Unwrap()}
	}
	return &wrapError{msg: msg}
}

// wrapError is Errorf's error with one %w operand (or none).
type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }
func (e *wrapError) Unwrap() error { return e.err }

// wrapErrors is Errorf's error with two %w operands or more.
type wrapErrors struct {
	msg  string
	errs []error
}

func (e *wrapErrors) Error() string   { return e.msg }
func (e *wrapErrors) Unwrap() []error { return e.errs }
