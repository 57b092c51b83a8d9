package ring

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"

	"github.com/shardis/shardis/internal/addrkey"
)

// MaxWeight is the largest weight ParseShards accepts for one shard.
const MaxWeight = 1 << 20

// Shard is one server of a ring.
type Shard struct {
	// Name identifies the shard on the ring. When empty, the ring uses
	// the shard's position (jedis), its address (murmur3) or its
	// address-derived continuum name (ketama, modula); see the package
	// documentation. An empty Name is Jedis's null name: a Java shard
	// named with the empty string is placed as a named one, which no Name
	// here reproduces.
	Name string
	// Addr is the server's "host:port".
	Addr string
	// Weight is the shard's share of the ring relative to the others. New
	// rejects weights <= 0; ParseShards fills in 1 when the weight is
	// omitted.
	Weight int
}

// Label returns the name users see: Name when set, else Addr.
func (s Shard) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Addr
}

// String returns the shard in ParseShards syntax: "host:port:weight[ name]".
// Credentials pasted into Addr ("user:password@host:port", which New and
// ParseShards refuse) show as "xxxxx@host:port", as in every output of a
// Shard (GoString, MarshalJSON, MarshalYAML); Label and the ring's
// placement use Addr as it is.
func (s Shard) String() string {
	e := addrkey.Redact(s.Addr) + ":" + strconv.Itoa(s.Weight)
	if s.Name != "" {
		e += " " + s.Name
	}
	return e
}

// GoString returns s as Go syntax, as %#v prints a struct, with
// credentials in Addr shown as "xxxxx@host:port" (see String).
func (s Shard) GoString() string {
	return fmt.Sprintf("ring.Shard{Name:%q, Addr:%q, Weight:%d}", s.Name, addrkey.Redact(s.Addr), s.Weight)
}

// shardFields is a Shard without its methods, for the encoders.
type shardFields Shard

// redacted returns s's fields with credentials in Addr hidden.
func (s Shard) redacted() shardFields {
	s.Addr = addrkey.Redact(s.Addr)
	return shardFields(s)
}

// MarshalJSON encodes s as encoding/json encodes a struct, field by
// field, except that credentials pasted into Addr are shown as
// "xxxxx@host:port" (see String).
func (s Shard) MarshalJSON() ([]byte, error) { return json.Marshal(s.redacted()) }

// MarshalYAML is MarshalJSON for the YAML encoders (go.yaml.in/yaml/v3,
// gopkg.in/yaml.v3): the fields as they encode a struct, with
// credentials in Addr hidden.
func (s Shard) MarshalYAML() (any, error) { return s.redacted(), nil }

// ParseShards parses a comma-separated list of twemproxy-style server
// entries "HOST:PORT[:WEIGHT][ NAME]", for example
//
//	127.0.0.1:6381:2 shard-a,127.0.0.1:6382:1 shard-b
//
// HOST may be an IPv6 literal in brackets ("[::1]:6379"). PORT is 1..65535.
// WEIGHT is a decimal integer in 1..MaxWeight and defaults to 1. NAME follows
// white space and may not contain white space, commas or control characters.
// White space around an entry is ignored; empty entries are errors.
//
// Every error wraps ErrBadShardList (plus ErrNoShards, ErrBadWeight or
// ErrDuplicateShard where that is the cause) and quotes the bad entry.
// Duplicate names or addresses are refused here already, so that an accepted
// list always describes distinct servers; addresses are compared as New
// compares them (see the package documentation), so "[::1]:6379" and
// "[0::1]:6379", or "localhost:6379" and "127.0.0.1:6379", are one server.
func ParseShards(list string) ([]Shard, error) {
	if strings.TrimSpace(list) == "" {
		return nil, &shardListError{index: -1, reason: "empty list", cause: ErrNoShards}
	}
	entries := strings.Split(list, ",")
	shards := make([]Shard, 0, len(entries))
	labels := make(map[string]int, len(entries))
	servers := make(serverSet, len(entries))
	for i, raw := range entries {
		s, reason, cause := parseShard(raw)
		if reason != "" {
			return nil, &shardListError{index: i, entry: raw, reason: reason, cause: cause}
		}
		if j := servers.add(s.Addr, i); j >= 0 {
			reason := fmt.Sprintf("address %s already used by entry %d", s.Addr, j)
			if prev := shards[j].Addr; prev != s.Addr {
				reason = fmt.Sprintf("address %s is the server of entry %d (%s)", s.Addr, j, prev)
			}
			return nil, &shardListError{index: i, entry: raw, cause: ErrDuplicateShard, reason: reason}
		}
		if j, dup := labels[s.Label()]; dup {
			return nil, &shardListError{index: i, entry: raw, cause: ErrDuplicateShard,
				reason: fmt.Sprintf("label %q already used by entry %d", s.Label(), j)}
		}
		labels[s.Label()] = i
		shards = append(shards, s)
	}
	return shards, nil
}

// shardListError is a ParseShards error: it names the entry and wraps
// ErrBadShardList plus, when there is one, a more precise sentinel.
type shardListError struct {
	index  int // -1 when no entry is to blame
	entry  string
	reason string
	cause  error
}

func (e *shardListError) Error() string {
	if e.index < 0 {
		return "shardis: bad shard list: " + e.reason
	}
	return fmt.Sprintf("shardis: bad shard list: entry %d %q: %s", e.index, addrkey.Redact(e.entry), e.reason)
}

func (e *shardListError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrBadShardList}
	}
	return []error{ErrBadShardList, e.cause}
}

// FormatShards returns shards in the syntax ParseShards reads, one entry per
// shard with an explicit weight. ParseShards(FormatShards(s)) returns s for
// every list ParseShards accepted. Credentials in an address, which
// ParseShards refuses, are hidden (see Shard.String).
func FormatShards(shards []Shard) string {
	parts := make([]string, len(shards))
	for i, s := range shards {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// parseShard parses one entry of a shard list. On failure it returns the
// reason and, when one applies, a sentinel error.
func parseShard(raw string) (s Shard, reason string, cause error) {
	e := strings.TrimSpace(raw)
	if e == "" {
		return Shard{}, "empty entry", nil
	}
	if sp := strings.IndexFunc(e, unicode.IsSpace); sp >= 0 {
		s.Name = strings.TrimLeftFunc(e[sp:], unicode.IsSpace)
		e = e[:sp]
		if strings.IndexFunc(s.Name, isBlankOrControl) >= 0 {
			return Shard{}, "the name after the address must be one word without control characters", nil
		}
	}
	if strings.IndexFunc(e, unicode.IsControl) >= 0 {
		return Shard{}, "control character in the address", nil
	}
	if addrkey.HasCredentials(e) {
		return Shard{}, errCredentials, nil
	}
	// Split off host (possibly a bracketed IPv6 literal), port and weight.
	var host, rest string
	if strings.HasPrefix(e, "[") {
		end := strings.IndexByte(e, ']')
		if end < 0 || end+1 >= len(e) || e[end+1] != ':' {
			return Shard{}, "want [IPV6]:PORT[:WEIGHT]", nil
		}
		host, rest = e[:end+1], e[end+2:]
		if strings.ContainsAny(host[1:end], "[]") || end == 1 {
			return Shard{}, fmt.Sprintf("bad IPv6 host %q", host), nil
		}
	} else {
		colon := strings.IndexByte(e, ':')
		if colon < 0 {
			return Shard{}, "want HOST:PORT[:WEIGHT]", nil
		}
		host, rest = e[:colon], e[colon+1:]
		if strings.ContainsAny(host, "[]") {
			return Shard{}, fmt.Sprintf("bad host %q", host), nil
		}
	}
	if host == "" {
		return Shard{}, "empty host", nil
	}
	portText, weightText, hasWeight := strings.Cut(rest, ":")
	port, ok := parseDecimal(portText, 65535)
	if !ok || port == 0 {
		return Shard{}, fmt.Sprintf("bad port %q (want 1..65535)", portText), nil
	}
	s.Addr = host + ":" + strconv.Itoa(port)
	s.Weight = 1
	if hasWeight {
		w, ok := parseDecimal(weightText, MaxWeight)
		if !ok || w == 0 {
			return Shard{}, fmt.Sprintf("bad weight %q (want 1..%d)", weightText, MaxWeight), ErrBadWeight
		}
		s.Weight = w
	}
	return s, "", nil
}

// isBlankOrControl reports characters that may not appear in a shard name.
func isBlankOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// parseDecimal parses a plain decimal number (digits only, no sign, no
// leading zeros beyond a single "0") not greater than limit.
func parseDecimal(s string, limit int) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > limit {
			return 0, false
		}
	}
	return n, true
}

// validateAddr checks that addr is "host:port" with a port in 1..65535
// written as ParseShards writes it: plain decimal, without a sign or a
// leading zero. "h:06379" and "h:+6379" dial the same server as "h:6379",
// so accepting them would let one server pass for two distinct shards.
func validateAddr(addr string) error {
	if addrkey.HasCredentials(addr) {
		return fmt.Errorf("address %q: %s", addrkey.Redact(addr), errCredentials)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: want host:port", addr)
	}
	if host == "" {
		return fmt.Errorf("address %q: empty host", addr)
	}
	if p, ok := parseDecimal(port, 65535); !ok || p == 0 {
		return fmt.Errorf("address %q: port must be 1..65535, in decimal without a sign or leading zeros", addr)
	}
	return nil
}

// errCredentials is why an address with an '@' in it is refused: it holds
// credentials (quoted only redacted, addrkey.Redact).
const errCredentials = "an address holds no credentials (give them in the client's pool options, or as user:password@ in a URL)"

// serverSet finds shards that name one server under two spellings of its
// address. It maps each canonical form (serverKeys) to a shard index.
type serverSet map[string]int

// add records shard i at addr and returns the index of an earlier shard
// at the same server, or -1.
func (set serverSet) add(addr string, i int) int {
	keys := serverKeys(addr)
	for _, k := range keys {
		if j, dup := set[k]; dup {
			return j
		}
	}
	for _, k := range keys {
		set[k] = i
	}
	return -1
}

// serverKeys returns the canonical forms of a host:port address
// (addrkey.Of); an address that does not split into host and port is its
// own only form.
func serverKeys(addr string) []string {
	if keys := addrkey.Of(addr); keys != nil {
		return keys
	}
	return []string{addr}
}
