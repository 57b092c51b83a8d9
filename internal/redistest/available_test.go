package redistest

import (
	"errors"
	"fmt"
	"testing"
)

// fakeTB records what Require does instead of ending the test.
type fakeTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped, f.msg = true, fmt.Sprintf(format, args...)
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
}

func TestRequireWithoutRedis(t *testing.T) {
	tests := []struct {
		ci       string
		wantFail bool
	}{
		{"", false},
		{"false", false},
		{"true", true},
		{"1", true},
		{"yes", true},
	}
	for _, tt := range tests {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv("CI", tt.ci)
			if err := Available(); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Available with an empty PATH = %v, want ErrUnavailable", err)
			}
			f := &fakeTB{TB: t}
			Require(f)
			if f.failed != tt.wantFail || f.skipped == tt.wantFail {
				t.Fatalf("failed=%t skipped=%t, want failed=%t", f.failed, f.skipped, tt.wantFail)
			}
			if _, err := Start(Options{}); !errors.Is(err, ErrUnavailable) {
				t.Errorf("Start with an empty PATH = %v, want ErrUnavailable", err)
			}
		})
	}
}

func TestRequireWithRedis(t *testing.T) {
	if Available() != nil {
		t.Skip("redis-server not installed")
	}
	t.Setenv("CI", "true")
	f := &fakeTB{TB: t}
	Require(f)
	if f.failed || f.skipped {
		t.Fatalf("Require stopped the test although redis is installed: %s", f.msg)
	}
}
