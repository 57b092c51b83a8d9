package redistest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// dialAs connects with redigo and logs in (user "" means no login).
func dialAs(t *testing.T, s *Server, user, pass string) (redis.Conn, error) {
	t.Helper()
	opts := []redis.DialOption{redis.DialConnectTimeout(2 * time.Second), redis.DialReadTimeout(2 * time.Second)}
	if pass != "" {
		opts = append(opts, redis.DialPassword(pass))
	}
	if user != "" {
		opts = append(opts, redis.DialUsername(user))
	}
	return redis.Dial("tcp", s.Addr, opts...)
}

func TestACLUsers(t *testing.T) {
	t.Parallel()
	s := StartTB(t, Options{Users: []User{
		{Name: "alice", Password: "s3cret-alice", Rules: "~* &* +@all"},
		{Name: "reader", Password: "s3cret-reader", Rules: "~* +@read +ping"},
		{Name: "free"}, // empty password and rules: nopass, everything
	}})

	// The harness logs in as the first user.
	if got, err := s.Do("ACL", "WHOAMI"); err != nil || got != "alice" {
		t.Fatalf("Do(ACL WHOAMI) = %q, %v; want alice", got, err)
	}
	if _, err := s.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		user, pass string
		cmd        []any
		wantDial   string // error code expected at login, "" for success
		wantCmd    string // error code expected from cmd, "" for success
	}{
		{"admin writes", "alice", "s3cret-alice", []any{"SET", "k2", "v"}, "", ""},
		{"reader reads", "reader", "s3cret-reader", []any{"GET", "k"}, "", ""},
		{"reader may not write", "reader", "s3cret-reader", []any{"SET", "k", "x"}, "", "NOPERM"},
		{"wrong password", "alice", "wrong", []any{"PING"}, "WRONGPASS", ""},
		{"unknown user", "mallory", "s3cret-alice", []any{"PING"}, "WRONGPASS", ""},
		{"nopass user", "free", "anything", []any{"SET", "k3", "v"}, "", ""},
		{"default user is off", "", "", []any{"PING"}, "", "NOAUTH"},
		{"default user cannot log in", "default", "x", []any{"PING"}, "WRONGPASS", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dialAs(t, s, tt.user, tt.pass)
			if tt.wantDial != "" {
				if err == nil {
					c.Close()
					t.Fatalf("login succeeded, want %s", tt.wantDial)
				}
				if !strings.Contains(err.Error(), tt.wantDial) {
					t.Fatalf("login error %v, want %s", err, tt.wantDial)
				}
				return
			}
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			defer c.Close()
			_, err = c.Do(tt.cmd[0].(string), tt.cmd[1:]...)
			switch {
			case tt.wantCmd == "" && err != nil:
				t.Fatalf("%v: %v", tt.cmd, err)
			case tt.wantCmd != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantCmd)):
				t.Fatalf("%v = %v, want %s", tt.cmd, err, tt.wantCmd)
			}
		})
	}

	// Passwords stay out of the command line and the configuration file,
	// and the configuration is private.
	conf := filepath.Join(s.Dir, confName)
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cret") {
		t.Errorf("redis.conf holds a plaintext user password")
	}
	if fi, err := os.Stat(conf); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("redis.conf mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID())); err == nil && strings.Contains(string(cmdline), "s3cret") {
		t.Errorf("the redis-server command line holds a password")
	}
	// redis-cli logs in with the same account.
	if out, err := s.CLI(t.Context(), "ACL", "WHOAMI"); err != nil || out != "alice" {
		t.Errorf("CLI(ACL WHOAMI) = %q, %v", out, err)
	}
}

func TestDefaultPassword(t *testing.T) {
	t.Parallel()
	s := StartTB(t, Options{DefaultPassword: "pw with spaces \"and\" quotes, \\ and é"})
	tests := []struct {
		name     string
		pass     string
		wantCode string
	}{
		{"no password", "", "NOAUTH"},
		{"wrong password", "nope", "WRONGPASS"},
		{"right password", "pw with spaces \"and\" quotes, \\ and é", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dialAs(t, s, "", tt.pass)
			if err == nil {
				defer c.Close()
				_, err = c.Do("PING")
			}
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("PING: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantCode) {
				t.Fatalf("got %v, want %s", err, tt.wantCode)
			}
		})
	}
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Errorf("Do(PING) = %q, %v", got, err)
	}
}

func TestDoReplyError(t *testing.T) {
	t.Parallel()
	s := StartTB(t, Options{})
	_, err := s.Do("NO-SUCH-COMMAND")
	var re *ReplyError
	if !errors.As(err, &re) || re.Code() != "ERR" {
		t.Fatalf("Do(unknown command) = %v, want a *ReplyError with code ERR", err)
	}
	if !strings.HasPrefix(err.Error(), "shardis: ") {
		t.Errorf("error %q lacks the shardis prefix", err)
	}
	if _, err := s.Do(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Do() = %v, want ErrInvalid", err)
	}
	if got, err := s.Do("RPUSH", "l", "a", "", "c"); err != nil || got != "3" {
		t.Fatalf("RPUSH = %q, %v", got, err)
	}
	if got, err := s.Do("LRANGE", "l", "0", "-1"); err != nil || got != "a\n\nc" {
		t.Errorf("LRANGE = %q, %v", got, err)
	}
}
