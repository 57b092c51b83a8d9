package pool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

func TestACLUser(t *testing.T) {
	srv := aclServer(t, false)
	set := newTestSet(t, Options{Username: "alice", Password: "s3cret"})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	who, err := redis.String(c.Do("ACL", "WHOAMI"))
	if err != nil || who != "alice" {
		t.Errorf("ACL WHOAMI = %q, %v; want alice", who, err)
	}
}

func TestRequirePass(t *testing.T) {
	srv := startServer(t, redistest.Options{DefaultPassword: "only-pass"})
	tests := []struct {
		name     string
		password string
		opts     Options // besides the password
		wantErr  bool
	}{
		{"right password", "only-pass", Options{}, false},
		{"right password, name and DB", "only-pass", Options{ClientName: "app", DB: 1}, false},
		{"wrong password", "guess-1234", Options{}, true},
		{"no password", "", Options{}, true},
		// The dial's own CLIENT SETNAME or SELECT meets the NOAUTH.
		{"no password, a name", "", Options{ClientName: "app"}, true},
		{"no password, a DB", "", Options{DB: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.Password = tt.password
			set := newTestSet(t, o)
			c, err := set.Get(context.Background(), srv.Addr)
			dialErr := err
			if err == nil {
				// Without a password the dial sends nothing; the first
				// command meets NOAUTH (the pool hands the reply as it
				// is; shard makes it an *AuthError).
				_, err = c.Do("PING")
				c.Close()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %t", err, tt.wantErr)
			}
			if dialErr != nil && !errors.Is(dialErr, ErrAuth) {
				t.Fatalf("err = %v, want one matching ErrAuth (a node that refuses credentials is not down)", err)
			}
			if tt.wantErr && tt.password != "" {
				var ae *AuthError
				if !errors.As(err, &ae) || ae.Username != "default" {
					t.Fatalf("err = %v, want *AuthError for user default", err)
				}
				if strings.Contains(err.Error(), tt.password) {
					t.Errorf("error %q contains the password", err)
				}
			}
		})
	}
}

func TestWrongPasswordIsAuthError(t *testing.T) {
	srv := aclServer(t, false)
	const wrong = "not-the-s3cret-xyz"
	tests := []struct {
		name      string
		username  string
		wantReply string // part of the server's reply kept in the error
	}{
		{"acl user", "alice", "WRONGPASS"},
		{"unknown user", "mallory", "WRONGPASS"},
		// The default user is switched off on this server.
		{"default user", "", "WRONGPASS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{Username: tt.username, Password: wrong})
			c, err := set.Get(context.Background(), srv.Addr)
			if c != nil || err == nil {
				t.Fatalf("Get = %v, %v; want an error", c, err)
			}
			var ae *AuthError
			if !errors.As(err, &ae) {
				t.Fatalf("Get error %v (%T), want *AuthError", err, err)
			}
			if !errors.Is(err, ErrAuth) {
				t.Error("errors.Is(err, ErrAuth) = false")
			}
			var de *DialError
			if errors.As(err, &de) {
				t.Error("an auth failure should not also be a *DialError")
			}
			wantUser := tt.username
			if wantUser == "" {
				wantUser = "default"
			}
			if ae.Addr != srv.Addr || ae.Username != wantUser {
				t.Errorf("AuthError{Addr %q, Username %q}, want %q, %q", ae.Addr, ae.Username, srv.Addr, wantUser)
			}
			msg := err.Error()
			if strings.Contains(msg, wrong) {
				t.Errorf("error %q contains the password", msg)
			}
			wantPrefix := "shardis: auth as " + wantUser + " on " + srv.Addr + " failed: "
			if !strings.HasPrefix(msg, wantPrefix) || !strings.Contains(msg, tt.wantReply) {
				t.Errorf("error %q, want prefix %q and the server's reply %q", msg, wantPrefix, tt.wantReply)
			}
			if st := set.Stats()[srv.Addr]; st.Dials != 1 || st.DialErrors != 1 || st.Active != 0 {
				t.Errorf("Stats = %+v, want one failed dial and no conns", st)
			}
		})
	}
}

func TestAuthEchoIsScrubbed(t *testing.T) {
	// With AUTH renamed away the server answers "unknown command 'AUTH',
	// with args beginning with: 'alice' '<password>'".
	srv := plainServer(t, "--rename-command", "AUTH", "")
	tests := []struct{ name, username, password string }{
		{"user and password", "alice", "echo-me-s3cret"},
		{"password only", "", "echo-me-s3cret"},
		{"quote in password", "", `it's"secret\x00`},
		{"long password", "alice", strings.Repeat("L0ng", 80)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{Username: tt.username, Password: tt.password})
			_, err := set.Get(context.Background(), srv.Addr)
			var ae *AuthError
			if !errors.As(err, &ae) {
				t.Fatalf("Get = %v, want *AuthError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "unknown command") {
				t.Errorf("error %q lost the server's reason", msg)
			}
			// No piece of the password may survive, not even a prefix.
			if p := tt.password[:8]; strings.Contains(msg, p) {
				t.Errorf("error %q contains part of the password", msg)
			}
			var reply redis.Error
			if !errors.As(err, &reply) || strings.Contains(string(reply), tt.password[:8]) {
				t.Errorf("the wrapped redis.Error %q should be scrubbed too", reply)
			}
		})
	}
}

func TestNewAuthErrorMasksPassword(t *testing.T) {
	tests := []struct {
		name, reply, password, want string
	}{
		{"plain reply", "WRONGPASS invalid username-password pair", "pw", "WRONGPASS invalid username-password pair"},
		{"echo cut", "ERR unknown command 'AUTH', with args beginning with: 'pw-1' ", "pw-1",
			"ERR unknown command 'AUTH', with args beginning with: (hidden)"},
		{"verbatim copy masked", "ERR bad password pw-1 for you", "pw-1", "ERR bad password *** for you"},
		{"no password set", "ERR something", "", "ERR something"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newAuthError("h:1", "u", tt.password, redis.Error(tt.reply))
			if got := e.Err.Error(); got != tt.want {
				t.Errorf("scrubbed reply = %q, want %q", got, tt.want)
			}
		})
	}
}
