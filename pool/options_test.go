package pool

import (
	"crypto/tls"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	const secret = "hunter2-secret"
	tests := []struct {
		name    string
		opts    Options
		wantErr string // substring of the error; empty means valid
	}{
		{"zero value", Options{}, ""},
		{"everything set", Options{MaxIdle: 4, MaxActive: 10, IdleTimeout: time.Minute, MaxConnLifetime: time.Hour,
			Wait: true, TestOnBorrow: time.Second, DialTimeout: time.Second, ReadTimeout: time.Second,
			WriteTimeout: time.Second, Username: "alice", Password: secret, DB: 3, ClientName: "app-1",
			TLSConfig: &tls.Config{}}, ""},
		{"never where allowed", Options{IdleTimeout: Never, TestOnBorrow: Never}, ""},
		{"read only", Options{ReadOnly: true}, ""},
		{"negative MaxIdle", Options{MaxIdle: -1}, "MaxIdle"},
		{"negative MaxActive", Options{MaxActive: -2}, "MaxActive"},
		{"negative DB", Options{DB: -1}, "DB"},
		{"negative IdleTimeout", Options{IdleTimeout: -time.Second}, "IdleTimeout"},
		{"negative TestOnBorrow", Options{TestOnBorrow: -2}, "TestOnBorrow"},
		{"negative MaxConnLifetime", Options{MaxConnLifetime: -time.Second}, "MaxConnLifetime"},
		{"Never MaxConnLifetime", Options{MaxConnLifetime: Never}, "MaxConnLifetime"},
		{"negative DialTimeout", Options{DialTimeout: -time.Second}, "DialTimeout"},
		{"Never DialTimeout", Options{DialTimeout: Never}, "DialTimeout"},
		{"negative ReadTimeout", Options{ReadTimeout: -time.Second}, "ReadTimeout"},
		{"negative WriteTimeout", Options{WriteTimeout: -time.Second}, "WriteTimeout"},
		{"user without password", Options{Username: "alice"}, "without a Password"},
		{"user with space", Options{Username: "al ice", Password: secret}, "white space"},
		{"client name with space", Options{ClientName: "my app"}, "ClientName"},
		{"client name with newline", Options{ClientName: "app\n"}, "ClientName"},
		{"client name not ASCII", Options{ClientName: "appé"}, "ClientName"},
		{"DB with ReadOnly", Options{DB: 2, ReadOnly: true}, "ReadOnly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if _, err := NewSet(tt.opts); err != nil {
					t.Fatalf("NewSet() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrBadOptions) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrBadOptions", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "shardis: ") {
				t.Errorf("Validate() = %q, want it to start with \"shardis: \" and mention %q", err, tt.wantErr)
			}
			if set, err2 := NewSet(tt.opts); set != nil || !errors.Is(err2, ErrBadOptions) {
				t.Errorf("NewSet() = %v, %v; want nil, ErrBadOptions", set, err2)
			}
		})
	}
}

func TestValidateNeverEchoesPassword(t *testing.T) {
	// Bad options next to a password: the error names the problem only.
	const secret = "pa55-word"
	for _, o := range []Options{
		{Password: secret, MaxIdle: -1},
		{Password: secret, Username: "bad user"},
		{Password: secret, ClientName: "a b"},
	} {
		err := o.Validate()
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("Validate() = %v, want an error without the password", err)
		}
	}
}

func TestStringHidesPassword(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		want     []string
		password string // must not appear
	}{
		{"no password", Options{}, []string{`Password=""`, "TLS=off"}, ""},
		{"password", Options{Password: "s3cret"}, []string{"Password=***"}, "s3cret"},
		{"user and password", Options{Username: "alice", Password: "correct horse"},
			[]string{`Username="alice"`, "Password=***"}, "correct horse"},
		{"password looks like an option", Options{Password: "DB=9 MaxIdle=3"}, []string{"Password=***", "DB=0"}, "DB=9 MaxIdle=3"},
		{"password equal to username", Options{Username: "bob", Password: "bobby"}, []string{"Password=***"}, "bobby"},
		{"tls", Options{TLSConfig: &tls.Config{ServerName: "redis.local", InsecureSkipVerify: true}},
			[]string{`TLS=on ServerName="redis.local" InsecureSkipVerify`}, ""},
		{"never", Options{IdleTimeout: Never, TestOnBorrow: Never}, []string{"IdleTimeout=never", "TestOnBorrow=never"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.opts.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("String() = %q, want it to contain %q", got, w)
				}
			}
			if tt.password != "" && strings.Contains(got, tt.password) {
				t.Errorf("String() = %q shows the password", got)
			}
		})
	}
}

func TestStringListsEveryOption(t *testing.T) {
	// A new field must show up in String; TLSConfig is shown as TLS=.
	got := Options{}.String()
	typ := reflect.TypeFor[Options]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if name == "TLSConfig" {
			name = "TLS"
		}
		if !strings.Contains(got, name+"=") {
			t.Errorf("String() = %q misses %s", got, name)
		}
	}
}

func TestDefaults(t *testing.T) {
	set, err := NewSet(Options{MaxActive: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	got := set.Options()
	want := Options{
		MaxIdle: DefaultMaxIdle, MaxActive: 3, IdleTimeout: DefaultIdleTimeout, TestOnBorrow: DefaultTestOnBorrow,
		DialTimeout: DefaultDialTimeout, ReadTimeout: DefaultReadTimeout, WriteTimeout: DefaultWriteTimeout,
	}
	if got != want {
		t.Errorf("Options() = %v\nwant        %v", got, want)
	}
	if DefaultMaxIdle != 64 || DefaultIdleTimeout != 5*time.Minute || DefaultDialTimeout != 5*time.Second ||
		DefaultReadTimeout != 3*time.Second || DefaultWriteTimeout != 3*time.Second || DefaultTestOnBorrow != time.Minute {
		t.Error("documented defaults changed")
	}
}
