package redistest

import "testing"

// CommandCalls counts what the server ran, per command, and 0 for a
// command it never ran.
func TestCommandCalls(t *testing.T) {
	s := StartTB(t, Options{})
	for range 3 {
		if _, err := s.Do("SET", "k", "v"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Do("GET", "k"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want int
	}{{"set", 3}, {"get", 1}, {"incr", 0}}
	for _, tt := range tests {
		got, err := s.CommandCalls(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("CommandCalls(%q) = %d, want %d", tt.name, got, tt.want)
		}
	}
}
