package shard

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/sentinel"
)

// SentinelOptions configures the ring shards that are Redis Sentinel
// master sets: a master with replicas whose address moves on failover
// while the shard's name, and so its place on the ring, stays.
//
// A Sentinel shard is an entry of Config.Shards with a Name and no Addr;
// its Sentinel settings are the entry of Shards with the same Name. Plain
// and Sentinel shards mix freely in one ring, in any order.
type SentinelOptions struct {
	// Shards are the Sentinel shards' settings, one per Config.Shards
	// entry without an address.
	Shards []SentinelShard

	// Addrs are the Sentinels ("host:port") of the shards that list none
	// of their own.
	Addrs []string
	// Username and Password log in to the Sentinels of the shards that
	// give no credentials of their own (ACL user, or Sentinel's
	// requirepass with Password alone). They are separate from the data
	// nodes' credentials (Config.Pool) and never appear in String, in
	// JSON or YAML encodings, or in errors.
	Username string
	Password string
	// TLSConfig, when not nil, makes the Sentinel connections of the
	// shards without a TLSConfig of their own use TLS.
	TLSConfig *tls.Config

	// ReadFrom chooses the nodes that serve read-only commands of Sentinel
	// shards: the master ("" or ReadMaster), or one of its replicas as
	// SENTINEL REPLICAS lists them (ReadReplicaRandom, ReadReplicaLatency),
	// the master when none is healthy. Replicas lag the master a little
	// (asynchronous replication).
	ReadFrom ReadPolicy
	// RefreshInterval between periodic queries of the Sentinels (master,
	// its role, replicas). 0 means 5s; negative turns them off
	// (+switch-master messages and failures still cause queries); a
	// positive interval below 10ms is refused.
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between two queries for one
	// shard, so that a burst of failures never becomes a storm. 0 means
	// 100ms; a positive interval below 1ms is refused.
	MinRefreshInterval time.Duration
	// Timeout bounds connecting to one Sentinel and each of its replies.
	// 0 means 1s; a positive timeout below 1ms is refused.
	Timeout time.Duration
	// FailoverWait is how long a command that did not run because its
	// shard's master was unreachable or read-only (a failover in
	// progress) waits for the new master and is sent again. 0 (the
	// default) fails such commands at once, as for plain shards. Writes
	// whose connection failed after sending are never sent again: they
	// fail with *UnknownOutcomeError; nor is a command whose write the
	// master reset twice in a row (a value over its proto-max-bulk-len):
	// it fails with the *NodeError that says it did not run. Client.Tx
	// runs a transaction again within FailoverWait only when nothing of
	// it can have run (see Client.Tx). A positive wait below 1ms is
	// refused.
	FailoverWait time.Duration
}

// SentinelShard is one ring shard behind Sentinel.
type SentinelShard struct {
	// Name is the shard's name on the ring (its placement identity); it
	// matches a Config.Shards entry without an address.
	Name string
	// MasterName is the name the Sentinels monitor the master set under;
	// "" means Name.
	MasterName string
	// Addrs are this shard's Sentinels; empty means SentinelOptions.Addrs.
	Addrs []string
	// Username and Password are this shard's Sentinel credentials; when
	// both are empty, SentinelOptions' are used. TLSConfig is this
	// shard's; when nil, SentinelOptions.TLSConfig is used.
	Username  string
	Password  string
	TLSConfig *tls.Config
}

// master returns the Sentinel master name.
func (s SentinelShard) master() string {
	if s.MasterName != "" {
		return s.MasterName
	}
	return s.Name
}

// resolved returns s with the defaults of o filled in.
func (o SentinelOptions) resolved(s SentinelShard) SentinelShard {
	if len(s.Addrs) == 0 {
		s.Addrs = o.Addrs
	}
	if s.Username == "" && s.Password == "" {
		s.Username, s.Password = o.Username, o.Password
	}
	// TLS is not a credential: a shard's own login keeps the shared
	// TLSConfig (its AUTH would otherwise go out in plain text).
	if s.TLSConfig == nil {
		s.TLSConfig = o.TLSConfig
	}
	return s
}

// clientOptions returns the sentinel package options for shard s.
func (o SentinelOptions) clientOptions(s SentinelShard) sentinel.Options {
	t := o.Timeout
	if t == 0 {
		t = time.Second
	}
	return sentinel.Options{Username: s.Username, Password: s.Password, TLSConfig: s.TLSConfig, DialTimeout: t, ReadTimeout: t}
}

func (o SentinelOptions) withDefaults() SentinelOptions {
	if o.RefreshInterval == 0 {
		o.RefreshInterval = 5 * time.Second
	}
	if o.MinRefreshInterval == 0 {
		o.MinRefreshInterval = 100 * time.Millisecond
	}
	if o.ReadFrom == "" {
		o.ReadFrom = ReadMaster
	}
	return o
}

// String describes o without passwords.
func (o SentinelOptions) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{Addrs: %v, Username: %q, Password: %s, TLS: %t, ReadFrom: %q, RefreshInterval: %v, MinRefreshInterval: %v, Timeout: %v, FailoverWait: %v, Shards: [",
		redactAddrs(o.Addrs), o.Username, redacted(o.Password), o.TLSConfig != nil, o.ReadFrom, o.RefreshInterval, o.MinRefreshInterval, o.Timeout, o.FailoverWait)
	for i, s := range o.Shards {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(s.String())
	}
	b.WriteString("]}")
	return b.String()
}

// GoString is String prefixed with the type, so that %#v, which would
// print every field as it is, hides the passwords too.
func (o SentinelOptions) GoString() string { return "shard.SentinelOptions" + o.String() }

// String describes s without its password (shown as ***).
func (s SentinelShard) String() string {
	return fmt.Sprintf("{Name: %q, MasterName: %q, Addrs: %v, Username: %q, Password: %s, TLS: %t}",
		s.Name, s.master(), redactAddrs(s.Addrs), s.Username, redacted(s.Password), s.TLSConfig != nil)
}

// GoString is String prefixed with the type, for %#v.
func (s SentinelShard) GoString() string { return "shard.SentinelShard" + s.String() }

// redactAddrs is addrs with credentials pasted into an address hidden
// (addrkey.Redact), for printing: Validate refuses them, but a program
// may print its options before.
func redactAddrs(addrs []string) []string {
	if !slices.ContainsFunc(addrs, addrkey.HasCredentials) {
		return addrs
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = addrkey.Redact(a)
	}
	return out
}

// MarshalJSON encodes o as encoding/json encodes a struct, field by
// field, except that a set Password (here and in Shards) is "***" and a
// TLSConfig only its ServerName and InsecureSkipVerify: a structured log
// of the options (slog's JSONHandler, zap) never shows a secret.
// Decoding is unchanged.
func (o SentinelOptions) MarshalJSON() ([]byte, error) { return json.Marshal(o.fields()) }

// MarshalYAML is MarshalJSON for the YAML encoders (go.yaml.in/yaml/v3,
// gopkg.in/yaml.v2 and v3).
func (o SentinelOptions) MarshalYAML() (any, error) { return o.fields(), nil }

// MarshalJSON encodes s as encoding/json encodes a struct, field by
// field, except that a set Password is "***" and a TLSConfig only its
// ServerName and InsecureSkipVerify. Decoding is unchanged.
func (s SentinelShard) MarshalJSON() ([]byte, error) { return json.Marshal(s.fields()) }

// MarshalYAML is MarshalJSON for the YAML encoders.
func (s SentinelShard) MarshalYAML() (any, error) { return s.fields(), nil }

// sentinelOptionFields and sentinelShardFields are what the encoders see
// of SentinelOptions and SentinelShard: the same fields in the same
// order, a set Password as "***", a TLSConfig as tlsFields (the Shards
// encode by their own MarshalJSON and MarshalYAML).
type sentinelOptionFields struct {
	Shards             []SentinelShard
	Addrs              []string
	Username           string
	Password           string
	TLSConfig          *tlsFields
	ReadFrom           ReadPolicy
	RefreshInterval    time.Duration
	MinRefreshInterval time.Duration
	Timeout            time.Duration
	FailoverWait       time.Duration
}

type sentinelShardFields struct {
	Name       string
	MasterName string
	Addrs      []string
	Username   string
	Password   string
	TLSConfig  *tlsFields
}

// tlsFields is what the encoders see of a tls.Config: never a
// certificate or a key.
type tlsFields struct {
	ServerName         string
	InsecureSkipVerify bool
}

func encodedTLS(c *tls.Config) *tlsFields {
	if c == nil {
		return nil
	}
	return &tlsFields{ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
}

func encodedPassword(p string) string {
	if p != "" {
		return "***"
	}
	return ""
}

func (o SentinelOptions) fields() sentinelOptionFields {
	return sentinelOptionFields{
		Shards: o.Shards, Addrs: o.Addrs, Username: o.Username, Password: encodedPassword(o.Password),
		TLSConfig: encodedTLS(o.TLSConfig), ReadFrom: o.ReadFrom, RefreshInterval: o.RefreshInterval,
		MinRefreshInterval: o.MinRefreshInterval, Timeout: o.Timeout, FailoverWait: o.FailoverWait,
	}
}

func (s SentinelShard) fields() sentinelShardFields {
	return sentinelShardFields{
		Name: s.Name, MasterName: s.MasterName, Addrs: s.Addrs, Username: s.Username,
		Password: encodedPassword(s.Password), TLSConfig: encodedTLS(s.TLSConfig),
	}
}

func redacted(secret string) string {
	if secret == "" {
		return `""`
	}
	return "***"
}

// sentinelKey is the pool key and node address of Sentinel shard name:
// not a host:port, so it can never be taken for a real server.
func sentinelKey(name string) string { return sentinelPrefix + name }

// sentinelPrefix starts the pool key of every Sentinel shard.
const sentinelPrefix = "sentinel/"

// placeholderAddr stands in for the address of Sentinel shard i on the
// ring, which needs one: shards with names are placed by name only, so
// the placeholder never changes where keys go. ".invalid" never resolves.
func placeholderAddr(i int) string { return fmt.Sprintf("sentinel-%d.invalid:26379", i) }

// ringShards returns c.Shards with placeholders for the Sentinel shards'
// addresses.
func (c Config) ringShards() []ring.Shard {
	if len(c.Sentinel.Shards) == 0 {
		return c.Shards
	}
	out := make([]ring.Shard, len(c.Shards))
	for i, s := range c.Shards {
		if s.Addr == "" {
			s.Addr = placeholderAddr(i)
		}
		out[i] = s
	}
	return out
}

// validateSentinel checks the Sentinel settings of a ring config.
func (c Config) validateSentinel() error {
	o := c.Sentinel
	if len(o.Shards) == 0 {
		for i, s := range c.Shards {
			if s.Addr == "" {
				// A bad shard, as one whose address lacks a port is.
				return &configError{
					msg:   fmt.Sprintf("shard %d (%q) has no address and there are no Sentinel shards", i, s.Name),
					cause: ring.ErrBadShard,
				}
			}
		}
		if !reflect.ValueOf(o).IsZero() {
			return fmt.Errorf("%w: Sentinel settings without Sentinel shards would be ignored (a Sentinel shard is a Sentinel.Shards entry named by a shard without an address)", ErrBadConfig)
		}
		return nil
	}
	switch {
	case o.MinRefreshInterval < 0:
		return fmt.Errorf("%w: Sentinel.MinRefreshInterval %v < 0", ErrBadConfig, o.MinRefreshInterval)
	case o.Timeout < 0:
		return fmt.Errorf("%w: Sentinel.Timeout %v < 0", ErrBadConfig, o.Timeout)
	case o.FailoverWait < 0:
		return fmt.Errorf("%w: Sentinel.FailoverWait %v < 0", ErrBadConfig, o.FailoverWait)
	// A few nanoseconds is a unit left out (Timeout: 500 meant as
	// milliseconds), as for the pool's durations: every Sentinel query
	// would time out, or no command would wait for a new master.
	case o.Timeout > 0 && o.Timeout < minSentinelDuration:
		return fmt.Errorf("%w: Sentinel.Timeout %v is below %v: is a unit missing (time.Second, time.Millisecond)?",
			ErrBadConfig, o.Timeout, minSentinelDuration)
	case o.FailoverWait > 0 && o.FailoverWait < minSentinelDuration:
		return fmt.Errorf("%w: Sentinel.FailoverWait %v is below %v: is a unit missing (time.Second, time.Millisecond)?",
			ErrBadConfig, o.FailoverWait, minSentinelDuration)
	}
	byName := map[string]int{}
	for i, s := range o.Shards {
		if s.Name == "" {
			return fmt.Errorf("%w: Sentinel shard %d has no name: a Sentinel shard's name is its place on the ring", ErrBadConfig, i)
		}
		if strings.ContainsAny(s.Name, ":/,") || strings.IndexFunc(s.Name, isBlankOrControl) >= 0 {
			return fmt.Errorf("%w: Sentinel shard name %q may not contain ':', '/', ',', white space or control characters", ErrBadConfig, s.Name)
		}
		if _, dup := byName[s.Name]; dup {
			return fmt.Errorf("%w: Sentinel shard %q listed twice", ErrBadConfig, s.Name)
		}
		byName[s.Name] = i
		r := o.resolved(s)
		for _, a := range r.Addrs {
			if addrkey.HasCredentials(a) {
				// Quoted raw by the sentinel package, or dialed with
				// them in the host name.
				return badConfigf("Sentinel shard %q: Sentinel address %q: an address holds no credentials (set Sentinel.Username and Sentinel.Password)", s.Name, addrkey.Redact(a))
			}
		}
		if _, err := sentinel.New(r.master(), r.Addrs, o.clientOptions(r)); err != nil {
			return badConfigf("Sentinel shard %q: %w", s.Name, err)
		}
	}
	if err := sameMasterSet(o); err != nil {
		return err
	}
	used := map[string]bool{}
	for i, s := range c.Shards {
		if s.Addr != "" {
			continue
		}
		if s.Name == "" {
			return fmt.Errorf("%w: shard %d has neither an address nor a name (a Sentinel shard must have a name)", ErrBadConfig, i)
		}
		if _, ok := byName[s.Name]; !ok {
			return fmt.Errorf("%w: shard %d (%q) has no address and no Sentinel settings", ErrBadConfig, i, s.Name)
		}
		used[s.Name] = true
	}
	for _, s := range o.Shards {
		if !used[s.Name] {
			return fmt.Errorf("%w: Sentinel shard %q is not in the shard list (add a shard with that name and no address)", ErrBadConfig, s.Name)
		}
	}
	switch o.ReadFrom {
	case "", ReadMaster, ReadReplicaRandom, ReadReplicaLatency:
	default:
		return fmt.Errorf("%w: unknown Sentinel read policy %q (want %q, %q or %q)", ErrBadConfig,
			o.ReadFrom, ReadMaster, ReadReplicaRandom, ReadReplicaLatency)
	}
	// A few nanoseconds would query the Sentinels back to back: a storm
	// of queries and a busy core, as with a tiny health interval.
	if o.RefreshInterval > 0 && o.RefreshInterval < minHealthInterval {
		return fmt.Errorf("%w: Sentinel.RefreshInterval %v is below %v: the queries would run back to back (a negative interval turns them off)",
			ErrBadConfig, o.RefreshInterval, minHealthInterval)
	}
	if o.MinRefreshInterval > 0 && o.MinRefreshInterval < minMinRefresh {
		return fmt.Errorf("%w: Sentinel.MinRefreshInterval %v is below %v: a burst of failures would query the Sentinels back to back",
			ErrBadConfig, o.MinRefreshInterval, minMinRefresh)
	}
	return nil
}

// sameMasterSet refuses two Sentinel shards that name the same master set
// of the same Sentinels (one of their Sentinels in common, under any
// spelling of its address: a Sentinel monitors one master set per name):
// they would be one server as two ring shards. The same name at other
// Sentinels is another master set.
func sameMasterSet(o SentinelOptions) error {
	type seen struct {
		shard string
		addr  string
	}
	byKey := map[string]seen{}
	for _, s := range o.Shards {
		r := o.resolved(s)
		for _, a := range r.Addrs {
			for _, k := range serverKeys(a) {
				key := r.master() + " " + k
				if prev, dup := byKey[key]; dup && prev.shard != s.Name {
					return &configError{cause: ring.ErrDuplicateShard,
						msg: fmt.Sprintf("Sentinel shards %q and %q are the same master set %q (Sentinel %s, %s)", prev.shard, s.Name, r.master(), prev.addr, a)}
				}
				byKey[key] = seen{shard: s.Name, addr: a}
			}
		}
	}
	return nil
}

// minSentinelDuration is the shortest positive SentinelOptions.Timeout
// and FailoverWait, as pool.Options refuses durations below it.
const minSentinelDuration = time.Millisecond

// minMinRefresh is the shortest SentinelOptions.MinRefreshInterval and
// ClusterOptions.MinRefreshInterval.
const minMinRefresh = time.Millisecond

func isBlankOrControl(r rune) bool { return r <= ' ' || r == 0x7f }
