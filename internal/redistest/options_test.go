package redistest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string // "" for valid
	}{
		{"zero value", Options{}, ""},
		{"everything", Options{Users: []User{{Name: "a", Password: "p"}}, DefaultPassword: "d", TLS: true, TLSClientAuth: true, Cluster: true, NodeTimeout: 500 * time.Millisecond}, ""},
		{"negative node timeout", Options{NodeTimeout: -1}, "NodeTimeout"},
		{"sub-millisecond node timeout", Options{NodeTimeout: time.Microsecond}, "NodeTimeout"},
		{"client auth without TLS", Options{TLSClientAuth: true}, "TLSClientAuth"},
		{"empty user name", Options{Users: []User{{Password: "p"}}}, "empty name"},
		{"user named default", Options{Users: []User{{Name: "default"}}}, "DefaultPassword"},
		{"space in user name", Options{Users: []User{{Name: "a b"}}}, "space"},
		{"duplicate user", Options{Users: []User{{Name: "a"}, {Name: "a"}}}, "twice"},
		{"line break in password", Options{Users: []User{{Name: "a", Password: "x\ny"}}}, "password"},
		{"line break in rules", Options{Users: []User{{Name: "a", Rules: "+@all\nuser x"}}}, "rules"},
		{"line break in default password", Options{DefaultPassword: "a\rb"}, "DefaultPassword"},
		{"NUL in args", Options{Args: []string{"--x", "a\x00"}}, "Args[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("validate = %v, want ErrInvalid mentioning %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "shardis: ") {
				t.Errorf("error %q lacks the shardis prefix", err)
			}
			// Start refuses before running anything.
			if s, err := Start(tt.opts); !errors.Is(err, ErrInvalid) {
				if s != nil {
					s.Stop()
				}
				t.Fatalf("Start = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestOptionsHidePasswords(t *testing.T) {
	o := Options{
		DefaultPassword: "top-secret-1",
		Users:           []User{{Name: "alice", Password: "top-secret-2", Rules: "+@all"}},
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, o) + fmt.Sprintf(format, o.Users[0]) + fmt.Sprintf(format, &o)
		if strings.Contains(out, "top-secret") {
			t.Errorf("%s prints a password: %s", format, out)
		}
		if !strings.Contains(out, "alice") {
			t.Errorf("%s hides the user name: %s", format, out)
		}
	}
}

func TestConfigText(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		want    []string
		wantNot []string
	}{
		{"plain", Options{}, []string{"port 7000\n", "bind 127.0.0.1\n", "save \"\"\n", "appendonly no\n"},
			[]string{"tls-port", "cluster-enabled", "requirepass", "masterauth", "user "}},
		{"cluster", Options{Cluster: true, NodeTimeout: 1500 * time.Millisecond},
			[]string{"cluster-enabled yes\n", "cluster-node-timeout 1500\n", "cluster-port 17000\n", "cluster-config-file nodes.conf\n"},
			[]string{"tls-cluster"}},
		{"cluster default node timeout", Options{Cluster: true}, []string{"cluster-node-timeout 5000\n"}, nil},
		{"users switch default off", Options{Users: []User{{Name: "a", Password: "pw"}}},
			[]string{"user default off\n", `user "a" reset on #` + "30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4" + ` "~*" "&*" "+@all"` + "\n"},
			[]string{"pw\"", "masterauth"}},
		{"nopass user", Options{Users: []User{{Name: "a", Rules: "+get"}}}, []string{`user "a" reset on nopass "+get"`}, nil},
		{"requirepass", Options{DefaultPassword: `a"b\c`}, []string{`requirepass "a\"b\\c"` + "\n"}, []string{"user default off"}},
		{"cluster masterauth", Options{Cluster: true, Users: []User{{Name: "adm", Password: "pw"}}},
			[]string{"masteruser \"adm\"\n", "masterauth \"pw\"\n"}, nil},
		{"tls", Options{TLS: true}, []string{"port 0\n", "tls-port 7000\n", "tls-auth-clients no\n", "tls-replication yes\n"}, []string{"\nport 7000\n"}},
		{"tls cluster client auth", Options{TLS: true, TLSClientAuth: true, Cluster: true}, []string{"tls-auth-clients yes\n", "tls-cluster yes\n"}, nil},
	}
	files := &TLSFiles{CAFile: "/d/ca", CertFile: "/d/c", KeyFile: "/d/k", ClientCertFile: "/d/cc", ClientKeyFile: "/d/ck"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := configText(tt.opts, 7000, "/tmp/x y", files)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("config lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("config has %q:\n%s", w, text)
				}
			}
			if !strings.Contains(text, `dir "/tmp/x y"`) {
				t.Errorf("dir not quoted:\n%s", text)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"abc", `"abc"`},
		{`a"b`, `"a\"b"`},
		{`a\b`, `"a\\b"`},
		{"a b", `"a b"`},
		{"\t\x00é", `"\x09\x00\xc3\xa9"`},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
