package redistest

import (
	"fmt"
	"strings"
	"time"
)

// DefaultNodeTimeout is the cluster-node-timeout used when
// Options.NodeTimeout is zero. It is long enough that a node stalled for a
// second or two by a loaded machine is not failed over behind a test's
// back; a test that kills a master and waits for its replica sets
// NodeTimeout to a second (a replica then takes over in about 2-3 s).
const DefaultNodeTimeout = 5000 * time.Millisecond

// defaultRules are the ACL rules given to a User whose Rules are empty.
const defaultRules = "~* &* +@all"

// Options configures the servers that Start, StartN and StartCluster run.
// The zero value is a plain server without authentication.
//
// Authentication works in three ways:
//   - no DefaultPassword and no Users: the "default" user needs no password;
//   - DefaultPassword set: the "default" user needs it (requirepass);
//   - Users set and no DefaultPassword: the "default" user is switched off,
//     so only the listed users can log in.
//
// The harness itself (readiness checks, Do, cluster creation and the
// replication link between cluster nodes) logs in as "default" when
// DefaultPassword is set and as Users[0] otherwise, so that account needs
// every permission (the default rules "~* &* +@all" are enough).
//
// Passwords never appear on a command line: they go into a configuration
// file readable only by the owner (users' passwords as SHA-256 hashes; the
// harness password of a cluster node also in plain text, as masterauth),
// and redis-cli gets them through its REDISCLI_AUTH environment variable.
type Options struct {
	// Args are extra redis-server arguments, e.g. []string{"--maxmemory",
	// "10mb"}. They come after the generated configuration and override it;
	// do not override port, tls-port, bind, dir, logfile or the cluster
	// settings, which the harness relies on.
	Args []string
	// Users are ACL users to create.
	Users []User
	// DefaultPassword is the password of the "default" user (requirepass).
	DefaultPassword string
	// TLS makes the server accept TLS connections only (port 0, tls-port
	// set to the chosen port), with a throwaway CA and a certificate for
	// 127.0.0.1 and localhost generated in Go. Clients verify it with
	// Server.TLS.ClientConfig().
	TLS bool
	// TLSClientAuth, with TLS, makes the server require a client
	// certificate signed by the throwaway CA (tls-auth-clients yes).
	// Server.TLS.ClientConfig() carries one.
	TLSClientAuth bool
	// Cluster starts the server with cluster support (--cluster-enabled
	// yes). StartCluster sets it.
	Cluster bool
	// NodeTimeout is the cluster-node-timeout; zero means
	// DefaultNodeTimeout. Only used with Cluster.
	NodeTimeout time.Duration

	// authority, when set, is the CA shared by servers started together
	// (StartN, StartCluster) so one client configuration trusts them all.
	authority *authority
}

// User is an ACL user created by Options.Users.
type User struct {
	// Name is the user name; it must not be "default" (use
	// Options.DefaultPassword for that user) and has no spaces.
	Name string
	// Password is the user's password; empty means the user needs none
	// (nopass).
	Password string
	// Rules are ACL rules separated by spaces, e.g. "~app:* +@read";
	// empty means "~* &* +@all".
	Rules string
}

// String returns the user's name and rules; the password is never shown.
func (u User) String() string {
	return fmt.Sprintf("User{Name:%q Password:%s Rules:%q}", u.Name, redact(u.Password), u.Rules)
}

// GoString is like String so that %#v does not print the password either.
func (u User) GoString() string { return u.String() }

// String describes the options without any password.
func (o Options) String() string {
	users := make([]string, len(o.Users))
	for i, u := range o.Users {
		users[i] = u.String()
	}
	return fmt.Sprintf("Options{Args:%q Users:[%s] DefaultPassword:%s TLS:%t TLSClientAuth:%t Cluster:%t NodeTimeout:%s}",
		o.Args, strings.Join(users, " "), redact(o.DefaultPassword), o.TLS, o.TLSClientAuth, o.Cluster, o.nodeTimeout())
}

// GoString is like String so that %#v does not print passwords either.
func (o Options) GoString() string { return o.String() }

func redact(secret string) string {
	if secret == "" {
		return `""`
	}
	return "<redacted>"
}

func (o Options) nodeTimeout() time.Duration {
	if o.NodeTimeout == 0 {
		return DefaultNodeTimeout
	}
	return o.NodeTimeout
}

// validate reports the first problem with o, wrapping ErrInvalid.
func (o Options) validate() error {
	if o.NodeTimeout < 0 {
		return fmt.Errorf("%w: NodeTimeout %s is negative", ErrInvalid, o.NodeTimeout)
	}
	if o.NodeTimeout != 0 && o.NodeTimeout < time.Millisecond {
		return fmt.Errorf("%w: NodeTimeout %s is below 1ms", ErrInvalid, o.NodeTimeout)
	}
	if o.TLSClientAuth && !o.TLS {
		return fmt.Errorf("%w: TLSClientAuth needs TLS", ErrInvalid)
	}
	if strings.ContainsAny(o.DefaultPassword, "\x00\r\n") {
		return fmt.Errorf("%w: DefaultPassword contains a NUL or line break", ErrInvalid)
	}
	seen := make(map[string]bool, len(o.Users))
	for i, u := range o.Users {
		switch {
		case u.Name == "":
			return fmt.Errorf("%w: Users[%d] has an empty name", ErrInvalid, i)
		case u.Name == "default":
			return fmt.Errorf("%w: Users[%d] is named \"default\"; set DefaultPassword instead", ErrInvalid, i)
		case strings.ContainsFunc(u.Name, func(r rune) bool { return r <= ' ' || r == 0x7f }):
			return fmt.Errorf("%w: Users[%d] name %q contains a space or control character", ErrInvalid, i, u.Name)
		case seen[u.Name]:
			return fmt.Errorf("%w: user %q is listed twice", ErrInvalid, u.Name)
		case strings.ContainsAny(u.Password, "\x00\r\n"):
			return fmt.Errorf("%w: the password of user %q contains a NUL or line break", ErrInvalid, u.Name)
		case strings.ContainsAny(u.Rules, "\x00\r\n"):
			return fmt.Errorf("%w: the rules of user %q contain a NUL or line break", ErrInvalid, u.Name)
		}
		seen[u.Name] = true
	}
	for i, a := range o.Args {
		if strings.ContainsAny(a, "\x00") {
			return fmt.Errorf("%w: Args[%d] contains a NUL byte", ErrInvalid, i)
		}
	}
	return nil
}

// credentials returns the account the harness logs in with: user is ""
// for the "default" user, and ok is false when no AUTH is needed.
func (o Options) credentials() (user, password string, ok bool) {
	switch {
	case o.DefaultPassword != "":
		return "", o.DefaultPassword, true
	case len(o.Users) > 0:
		if o.Users[0].Password == "" {
			// A nopass user accepts any password, but redis-cli and the
			// replication link only log in when given a non-empty one.
			return o.Users[0].Name, "nopass", true
		}
		return o.Users[0].Name, o.Users[0].Password, true
	}
	return "", "", false
}
