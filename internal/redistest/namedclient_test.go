package redistest

import (
	"strings"
	"testing"
	"time"
)

// The named connection is on the server until the key holds a value
// ready accepts, and leaves hold after that.
func TestLeaveAfterTB(t *testing.T) {
	s := StartTB(t, Options{})
	listed := func() bool {
		out, err := s.Do("CLIENT", "LIST")
		if err != nil {
			t.Fatalf("CLIENT LIST: %v", err)
		}
		return strings.Contains(out, "name=leaver ")
	}
	left := s.LeaveAfterTB(t, "leaver", "marker", func(v string) bool { return v == "go" }, 100*time.Millisecond)
	if !listed() {
		t.Fatal("the named connection is not on the server")
	}
	if _, err := s.Do("SET", "marker", "wait"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-left:
		t.Fatalf("left before the key was ready: %v", err)
	case <-time.After(300 * time.Millisecond): // polled many times meanwhile
	}
	if !listed() {
		t.Fatal("the named connection left before the key was ready")
	}
	if _, err := s.Do("SET", "marker", "go"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-left:
		if err != nil {
			t.Fatalf("leaving: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the named connection did not leave")
	}
	deadline := time.Now().Add(10 * time.Second)
	for listed() {
		if time.Now().After(deadline) {
			t.Fatal("the named connection is still on the server")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
