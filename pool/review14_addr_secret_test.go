package pool

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// An address with credentials pasted into it (a URL's userinfo) is not an
// address: the error says so without repeating the password.
func TestReview14BadAddrHidesCredentials(t *testing.T) {
	s, err := NewSet(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, addr := range []string{
		"user:s3cretpw@127.0.0.1:6379",
		":s3cretpw@127.0.0.1:6379",
		"redis://:s3cretpw@127.0.0.1:6379",
		"user:s3cretpw@127.0.0.1",
		"u:s3cretpw@[::1]:0",
	} {
		_, err := s.Get(context.Background(), addr)
		if err == nil {
			t.Fatalf("Get(%q) = nil error, want ErrBadAddr", addr)
		}
		if !errors.Is(err, ErrBadAddr) {
			t.Errorf("Get(%q) = %v, want ErrBadAddr", addr, err)
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("Get(%q): error shows the password: %v", addr, err)
		}
	}
}
