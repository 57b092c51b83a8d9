package errtext

import (
	"errors"
	"io/fs"
	"testing"
)

func TestJoin(t *testing.T) {
	a := errors.New("shardis: node a: refused")
	b := errors.New("shardis: node b: timed out")
	if err := Join("shardis: op: 0 of 2 failed", nil, nil); err != nil {
		t.Errorf("Join of nils = %v, want nil", err)
	}
	for _, tt := range []struct {
		err  error
		want string
		errs []error
	}{
		{Join("shardis: op: 1 of 2 failed", nil, a), "shardis: op: 1 of 2 failed: node a: refused", []error{a}},
		{Join("shardis: op: 2 of 2 failed", a, b), "shardis: op: 2 of 2 failed:\nnode a: refused\nnode b: timed out", []error{a, b}},
		{Join("shardis: 100% of them", a), "shardis: 100% of them: node a: refused", []error{a}},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
		j, ok := tt.err.(interface{ Unwrap() []error })
		if !ok {
			t.Errorf("%q has no Unwrap() []error", tt.want)
			continue
		}
		got := j.Unwrap()
		if len(got) != len(tt.errs) {
			t.Errorf("%q unwraps to %d errors, want %d", tt.want, len(got), len(tt.errs))
			continue
		}
		for i := range got {
			if got[i] != tt.errs[i] {
				t.Errorf("%q: error %d is %v, want %v", tt.want, i, got[i], tt.errs[i])
			}
		}
	}
	path := &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrPermission}
	var pe *fs.PathError
	if err := Join("shardis: op", a, path); !errors.As(err, &pe) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%v: errors.As and errors.Is do not find the operand", err)
	}
}

func TestNested(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, "<nil>"},
		{errors.New("shardis: one line"), "one line"},
		{errors.Join(errors.New("shardis: first"), errors.New("shardis: second")), "first\n\tsecond"},
	} {
		if got := Nested(tt.err); got != tt.want {
			t.Errorf("Nested(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
