package pool

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A duration of a few nanoseconds is a unit left out (IdleTimeout: 300
// meant as seconds): every borrow would dial again, or every read time
// out, with nothing saying why. Such options are refused and the error
// names the field; a millisecond and more, zero (the default), Never
// where it is allowed, and a tiny TestOnBorrow ("check every borrow")
// are accepted.
func TestReview9TinyDurationsAreRefused(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		field string // "" when accepted
	}{
		{"idle timeout in ns", Options{IdleTimeout: 300}, "IdleTimeout"},
		{"lifetime in ns", Options{MaxConnLifetime: 3600}, "MaxConnLifetime"},
		{"dial timeout in ns", Options{DialTimeout: 5}, "DialTimeout"},
		{"read timeout in µs", Options{ReadTimeout: 999 * time.Microsecond}, "ReadTimeout"},
		{"write timeout in ns", Options{WriteTimeout: 3}, "WriteTimeout"},
		{"a millisecond", Options{ReadTimeout: time.Millisecond, IdleTimeout: time.Millisecond}, ""},
		{"defaults", Options{}, ""},
		{"idle never", Options{IdleTimeout: Never}, ""},
		{"test every borrow", Options{TestOnBorrow: time.Nanosecond}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrBadOptions) {
				t.Fatalf("not ErrBadOptions: %v", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("%q does not name %s", err, tt.field)
			}
		})
	}
}
