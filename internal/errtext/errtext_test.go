package errtext

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestErrorf(t *testing.T) {
	inner := errors.New("shardis: inner failure")
	other := errors.New("shardis: other failure")
	path := &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrPermission}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{Errorf("shardis: layer: %w", inner), "shardis: layer: inner failure"},
		{Errorf("layer: %w", inner), "layer: inner failure"},
		{Errorf("%w (and then: %w)", path, inner), "open /x: permission denied (and then: inner failure)"},
		{Errorf("%w: context: %w", inner, other), "shardis: inner failure: context: other failure"},
		{Errorf("shardis: joined: %w", errors.Join(inner, other)), "shardis: joined: inner failure\nother failure"},
		{Errorf("shardis: as a value %v, %d", inner, 3), "shardis: as a value inner failure, 3"},
		{Errorf("shardis: layer: %w", path), "shardis: layer: open /x: permission denied"},
		{Errorf("shardis: quoted %q", "shardis: x"), `shardis: quoted "shardis: x"`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	two := Errorf("%w: context: %w", inner, path)
	if !errors.Is(two, inner) || !errors.Is(two, fs.ErrPermission) {
		t.Errorf("%v does not match both operands", two)
	}
	var pe *fs.PathError
	if !errors.As(Errorf("shardis: layer: %w", path), &pe) || pe != path {
		t.Error("errors.As does not find the wrapped *fs.PathError")
	}
	if got := errors.Unwrap(Errorf("shardis: layer: %w", inner)); got != inner {
		t.Errorf("Unwrap = %v, want the operand", got)
	}
	if got := errors.Unwrap(Errorf("shardis: no operand %d", 1)); got != nil {
		t.Errorf("Unwrap of an error without %%w = %v, want nil", got)
	}
	if got, want := Cause(fmt.Errorf("shardis: a\nshardis: b")), "a\nb"; got != want {
		t.Errorf("Cause = %q, want %q", got, want)
	}
	sub := errors.New("shardis: sentinel: server is not a master")
	if got, want := ErrorfIn("sentinel: ", "named a, which failed the check: %w", sub).Error(), "named a, which failed the check: server is not a master"; got != want {
		t.Errorf("ErrorfIn = %q, want %q", got, want)
	}
	if got, want := ErrorfIn("sentinel: ", "check: %w", inner).Error(), "check: inner failure"; got != want {
		t.Errorf("ErrorfIn = %q, want %q", got, want)
	}
	if got, want := Trim("shardis: sentinel: x", "shardis: sentinel: ", Prefix), "x"; got != want {
		t.Errorf("Trim = %q, want %q", got, want)
	}
}
