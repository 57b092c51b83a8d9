package pool

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Defaults used by NewSet for Options fields left at zero.
const (
	DefaultMaxIdle      = 64
	DefaultIdleTimeout  = 5 * time.Minute
	DefaultTestOnBorrow = time.Minute
	DefaultDialTimeout  = 5 * time.Second
	DefaultReadTimeout  = 3 * time.Second
	DefaultWriteTimeout = 3 * time.Second
)

// Never turns off IdleTimeout (idle connections are kept until MaxIdle pushes
// them out) or TestOnBorrow (borrowed connections are never pinged). Other
// fields reject it like any negative value.
const Never time.Duration = -1

// Options configures every pool of a Set. The fields mirror what Jedis users
// set on JedisPoolConfig and JedisShardInfo. A field left at zero takes the
// default named in its comment; Options is a plain value and safe to copy.
type Options struct {
	// MaxIdle is the most idle connections kept per address (and again per
	// address for read-only connections). Zero means DefaultMaxIdle (64):
	// Jedis's default of 8 makes a burst of more callers than that dial and
	// close connections on every command, since MaxActive is unlimited by
	// default; an idle connection costs the server and the client a few KiB.
	MaxIdle int
	// MaxActive is the most connections, idle or borrowed, open per address
	// at once. Zero means no limit.
	MaxActive int
	// IdleTimeout closes connections idle for longer than this. Zero means
	// DefaultIdleTimeout (5m); Never keeps them. Keep it below the server's
	// "timeout" setting.
	IdleTimeout time.Duration
	// MaxConnLifetime closes connections older than this when they are next
	// borrowed. Zero means no limit.
	MaxConnLifetime time.Duration
	// Wait makes Get wait for a connection to come back when MaxActive are
	// borrowed, until the context passed to Get is done. Without Wait such a
	// Get fails at once with an error wrapping redis.ErrPoolExhausted.
	Wait bool
	// TestOnBorrow sends PING on an idle connection that has been idle for
	// longer than this before handing it out, and dials a fresh one when the
	// PING fails (for example after a server restart or a CLIENT KILL). A
	// Get whose context has ended sends no PING: it fails with the
	// context's error and leaves the idle connections as they were. Zero
	// means DefaultTestOnBorrow (1m); Never turns the check off.
	TestOnBorrow time.Duration
	// DialTimeout bounds a whole dial: TCP connect, TLS handshake and the
	// setup commands (AUTH, CLIENT SETNAME, SELECT, READONLY). Zero means
	// DefaultDialTimeout (5s). A context passed to Get can only shorten it.
	DialTimeout time.Duration
	// ReadTimeout bounds the wait for each whole reply, however slowly
	// its bytes arrive (redigo's Do bounds all the replies it reads). Zero
	// means DefaultReadTimeout (3s).
	ReadTimeout time.Duration
	// WriteTimeout bounds the write of each command. Zero means
	// DefaultWriteTimeout (3s).
	WriteTimeout time.Duration
	// Username is the ACL user sent with AUTH. It needs a Password.
	Username string
	// Password, when set, is sent while dialing as "AUTH <Username>
	// <Password>", or "AUTH <Password>" without a Username. It never appears
	// in String, in JSON or YAML encodings of Options, or in any error.
	Password string
	// DB is the database selected while dialing when it is not 0. Only plain
	// Redis servers (ring mode) have more than one database; Redis Cluster
	// nodes accept only 0.
	DB int
	// ClientName is set with CLIENT SETNAME while dialing when not empty, so
	// the connections are easy to find in CLIENT LIST. Redis refuses spaces
	// and control characters in it. Set.SetClientName changes it at run
	// time.
	ClientName string
	// TLSConfig, when not nil, makes every connection use TLS with this
	// configuration. When its ServerName is empty, the host part of the node
	// address is used, so certificates are checked against each node. The
	// configuration is copied and never modified.
	TLSConfig *tls.Config
	// ReadOnly sends READONLY while dialing every connection handed out by
	// Get, for a Set that talks only to Redis Cluster replicas, and refuses
	// a replica that has not synced yet, as GetReadOnly does. GetReadOnly
	// sends it regardless. Plain Redis servers refuse READONLY.
	ReadOnly bool
}

// Validate reports the first problem found in o, wrapped around
// ErrBadOptions. Zero values are valid: they stand for the defaults. A
// positive IdleTimeout, MaxConnLifetime, DialTimeout, ReadTimeout or
// WriteTimeout below a millisecond is refused as a unit left out.
func (o Options) Validate() error {
	ints := []struct {
		name string
		v    int
	}{{"MaxIdle", o.MaxIdle}, {"MaxActive", o.MaxActive}, {"DB", o.DB}}
	for _, f := range ints {
		if f.v < 0 {
			return badOptions("%s is %d, must not be negative", f.name, f.v)
		}
	}
	durations := []struct {
		name     string
		v        time.Duration
		canNever bool
	}{
		{"IdleTimeout", o.IdleTimeout, true},
		{"MaxConnLifetime", o.MaxConnLifetime, false},
		{"TestOnBorrow", o.TestOnBorrow, true},
		{"DialTimeout", o.DialTimeout, false},
		{"ReadTimeout", o.ReadTimeout, false},
		{"WriteTimeout", o.WriteTimeout, false},
	}
	for _, f := range durations {
		if f.v < 0 && !(f.canNever && f.v == Never) {
			if f.canNever {
				return badOptions("%s is %v, must be zero, positive or Never", f.name, f.v)
			}
			return badOptions("%s is %v, must not be negative", f.name, f.v)
		}
		// A few nanoseconds is a unit left out (IdleTimeout: 300 meant
		// as seconds): every borrow would dial, or every read time out.
		// TestOnBorrow is exempt: any tiny value means "check every
		// borrow".
		if f.v > 0 && f.v < minDuration && f.name != "TestOnBorrow" {
			return badOptions("%s is %v, below %v: is a unit missing (time.Second, time.Millisecond)?", f.name, f.v, minDuration)
		}
	}
	if o.Username != "" && o.Password == "" {
		return badOptions("Username %s is set without a Password (for a nopass ACL user give any password)", quotedUser(o.Username))
	}
	if strings.ContainsAny(o.Username, " \t\r\n") {
		return badOptions("Username %s contains white space", quotedUser(o.Username))
	}
	if err := checkClientName(o.ClientName); err != nil {
		return err
	}
	if o.ReadOnly && o.DB != 0 {
		return badOptions("DB is %d with ReadOnly; Redis Cluster nodes have only database 0", o.DB)
	}
	return nil
}

// minDuration is the shortest positive IdleTimeout, MaxConnLifetime,
// DialTimeout, ReadTimeout and WriteTimeout.
const minDuration = time.Millisecond

// withDefaults returns o with zero fields replaced by their defaults.
func (o Options) withDefaults() Options {
	if o.MaxIdle == 0 {
		o.MaxIdle = DefaultMaxIdle
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.TestOnBorrow == 0 {
		o.TestOnBorrow = DefaultTestOnBorrow
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	return o
}

// String lists every option. A set password is shown as "***"; the secret
// itself never appears. Durations equal to Never are shown as "never".
func (o Options) String() string {
	password := `""`
	if o.Password != "" {
		password = "***"
	}
	tlsText := "off"
	if c := o.TLSConfig; c != nil {
		tlsText = "on"
		if c.ServerName != "" {
			tlsText += " ServerName=" + strconv.Quote(c.ServerName)
		}
		if c.InsecureSkipVerify {
			tlsText += " InsecureSkipVerify"
		}
	}
	return fmt.Sprintf("MaxIdle=%d MaxActive=%d IdleTimeout=%s MaxConnLifetime=%s Wait=%t "+
		"TestOnBorrow=%s DialTimeout=%s ReadTimeout=%s WriteTimeout=%s "+
		"Username=%q Password=%s DB=%d ClientName=%q TLS=%s ReadOnly=%t",
		o.MaxIdle, o.MaxActive, durationText(o.IdleTimeout), durationText(o.MaxConnLifetime), o.Wait,
		durationText(o.TestOnBorrow), durationText(o.DialTimeout), durationText(o.ReadTimeout), durationText(o.WriteTimeout),
		o.Username, password, o.DB, o.ClientName, tlsText, o.ReadOnly)
}

// GoString is String wrapped as "pool.Options{...}", so that %#v, which
// would print every field as it is, hides the password too.
func (o Options) GoString() string { return "pool.Options{" + o.String() + "}" }

// Format prints o as String describes it, whatever the verb (GoString for
// %#v): fmt consults String only for %v, %s, %q, %x and %X, and with any
// other verb (a %d whose argument slipped) it would print every field as
// it is, the password among them. A verb that does not suit a string
// still says so (%!d(string=MaxIdle=...)), without the secret.
func (o Options) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, o.GoString())
		return
	}
	_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), o.String())
}

// MarshalJSON encodes o as encoding/json encodes a struct, field by
// field, except that a set Password is "***" and TLSConfig (when set)
// only its ServerName and InsecureSkipVerify: a structured log of the
// options (slog's JSONHandler, zap) never shows a secret, and a TLS
// configuration no longer makes it fail. Decoding is unchanged (a
// document with the real password still sets it).
func (o Options) MarshalJSON() ([]byte, error) { return json.Marshal(o.fields()) }

// MarshalYAML is MarshalJSON for the YAML encoders (go.yaml.in/yaml/v3,
// gopkg.in/yaml.v2 and v3): the fields as they would encode them, a set
// Password as "***".
func (o Options) MarshalYAML() (any, error) { return o.fields(), nil }

// optionFields is what the encoders see of Options: the same fields in
// the same order, a set Password as "***", a TLSConfig as tlsFields.
type optionFields struct {
	MaxIdle         int
	MaxActive       int
	IdleTimeout     time.Duration
	MaxConnLifetime time.Duration
	Wait            bool
	TestOnBorrow    time.Duration
	DialTimeout     time.Duration
	ReadTimeout     time.Duration
	WriteTimeout    time.Duration
	Username        string
	Password        string
	DB              int
	ClientName      string
	TLSConfig       *tlsFields
	ReadOnly        bool
}

// tlsFields is what the encoders see of a tls.Config: what String shows
// of it, never a certificate or a key.
type tlsFields struct {
	ServerName         string
	InsecureSkipVerify bool
}

func (o Options) fields() optionFields {
	f := optionFields{
		MaxIdle: o.MaxIdle, MaxActive: o.MaxActive, IdleTimeout: o.IdleTimeout,
		MaxConnLifetime: o.MaxConnLifetime, Wait: o.Wait, TestOnBorrow: o.TestOnBorrow,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		Username: o.Username, DB: o.DB, ClientName: o.ClientName, ReadOnly: o.ReadOnly,
	}
	if o.Password != "" {
		f.Password = "***"
	}
	if c := o.TLSConfig; c != nil {
		f.TLSConfig = &tlsFields{ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
	}
	return f
}

func durationText(d time.Duration) string {
	if d == Never {
		return "never"
	}
	return d.String()
}

// quotedUser is a user name as an error shows it: quoted, unless it
// holds a ':', as "user:password" pasted whole does.
func quotedUser(u string) string {
	if strings.Contains(u, ":") {
		return "(not quoted: it holds a ':', as user:password given whole does)"
	}
	return strconv.Quote(u)
}
