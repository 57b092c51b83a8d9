package main

import (
	"errors"
	"slices"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name string
		in   string
		args []string // nil with n == 0: incomplete
		n    int
		bad  bool
	}{
		{"set", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n", []string{"SET", "k", "vv"}, 28, false},
		{"two commands, first only", "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", []string{"PING"}, 14, false},
		{"empty argument", "*2\r\n$3\r\nGET\r\n$0\r\n\r\n", []string{"GET", ""}, 19, false},
		{"binary argument", "*1\r\n$4\r\na\r\nb\r\n", []string{"a\r\nb"}, 14, false},
		{"empty array", "*0\r\n", []string{}, 4, false},
		{"inline", "PING hello\r\n", []string{"PING", "hello"}, 12, false},
		{"inline LF only", "PING\n", []string{"PING"}, 5, false},
		{"empty inline line", "\r\n", []string{}, 2, false},
		{"incomplete header", "*3\r", nil, 0, false},
		{"incomplete argument", "*1\r\n$4\r\nPI", nil, 0, false},
		{"missing CRLF after argument", "*1\r\n$4\r\nPING", nil, 0, false},
		{"incomplete inline", "PING", nil, 0, false},
		{"nothing", "", nil, 0, false},
		{"not a bulk string", "*1\r\n:4\r\n", nil, 0, true},
		{"bad length", "*x\r\n", nil, 0, true},
		{"negative length", "*1\r\n$-2\r\n", nil, 0, true},
		{"null argument", "*1\r\n$-1\r\n", nil, 0, true},
		{"length without CR", "*1\n", nil, 0, true},
		{"argument not ended by CRLF", "*1\r\n$1\r\nabc\r\n", nil, 0, true},
		{"too many arguments", "*2000000\r\n", nil, 0, true},
		{"argument too large", "*1\r\n$99999999999\r\n", nil, 0, true},
		{"length line too long", "*111111111111111111", nil, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, n, err := parseCommand([]byte(tc.in), nil)
			if tc.bad {
				if !errors.Is(err, errProtocol) {
					t.Fatalf("err = %v, want errProtocol", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if n != tc.n {
				t.Fatalf("used %d bytes, want %d", n, tc.n)
			}
			if tc.args == nil {
				return
			}
			got := make([]string, len(args))
			for i, a := range args {
				got[i] = string(a)
			}
			if !slices.Equal(got, tc.args) {
				t.Fatalf("args = %q, want %q", got, tc.args)
			}
		})
	}
}

// FuzzParseCommand checks that any input either parses into arguments
// that lie within the input, waits for more, or fails with errProtocol,
// and that a complete command parses the same with bytes appended.
func FuzzParseCommand(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n"))
	f.Add([]byte("PING\r\n"))
	f.Add([]byte("*1\r\n$-1\r\n"))
	f.Add([]byte("*0\r\n*1\r\n$4\r\nPING\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		args, n, err := parseCommand(in, nil)
		if err != nil {
			if !errors.Is(err, errProtocol) {
				t.Fatalf("error %v does not wrap errProtocol", err)
			}
			return
		}
		if n < 0 || n > len(in) {
			t.Fatalf("used %d of %d bytes", n, len(in))
		}
		if n == 0 {
			return
		}
		total := 0
		for _, a := range args {
			total += len(a)
		}
		if total > n {
			t.Fatalf("%d argument bytes from %d input bytes", total, n)
		}
		more := append(slices.Clone(in[:n]), "*1\r\n$4\r\nPING\r\n"...)
		args2, n2, err2 := parseCommand(more, nil)
		if err2 != nil || n2 != n || len(args2) != len(args) {
			t.Fatalf("with bytes appended: %d args, %d bytes, %v; alone: %d args, %d bytes", len(args2), n2, err2, len(args), n)
		}
	})
}
