package shard

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
)

// ParseURL reads a Config from a URL:
//
//	redis-ring://[user:password@]host:port[,host:port...][?option=value&...]
//	redis-cluster://[user:password@]seed:port[,seed:port...][?option=value&...]
//	redis-ring+sentinel://[user:password@]sentinel:port[,sentinel:port...]?shards=...[&option=value...]
//
// In a redis-ring+sentinel URL the hosts are the Sentinels and the shards
// option lists the ring's shards in order: NAME or NAME=MASTER for a
// Sentinel shard (MASTER is the Sentinels' master name, NAME by default),
// HOST:PORT[:WEIGHT]+NAME for a plain one (the '+' as it is, or %2B as
// url.Values.Encode writes it), e.g.
// shards=shard-a=mymaster-a,shard-b,10.0.0.3:6379+shard-c. User and
// password are the data nodes'; the Sentinels' are sentinel_username and
// sentinel_password. Its other options: sentinel_tls=true,
// read_from=master|replica-random|replica-latency, sentinel_refresh_interval,
// sentinel_min_refresh_interval, sentinel_timeout, failover_wait.
//
// The schemes rediss-ring, rediss-cluster and rediss-ring+sentinel turn TLS on (verifying the
// servers against the system roots). Options:
//
//	hash, key_hash, tag            ring placement (see package ring)
//	names=a,b,c                    shard names, in host order (ring mode)
//	weights=2,1,1                  shard weights, in host order (ring mode; in
//	                               the shards option's order with Sentinels;
//	                               a ring holds at most ring.MaxPoints points)
//	db                             database number (ring mode)
//	dial_timeout, read_timeout, write_timeout, idle_timeout,
//	max_conn_lifetime, test_on_borrow   durations such as 500ms or 3s
//	max_idle, max_active           pool sizes
//	wait                           wait for a connection when the pool is exhausted
//	client_name                    CLIENT SETNAME on every connection (auto: the
//	                               naming convention of migrations, AutoClientName)
//	auto_pipeline=false            no automatic pipelining (on by default)
//	health_interval, health_timeout, failure_limit, auto_eject   health checks
//	refresh_interval, min_refresh_interval, max_redirects, max_retry_wait,
//	read_from=master|replica-random|replica-latency         cluster mode
//	from=URL                       migrate from the topology of that URL
//	                               (percent-encoded, or last; see Migration);
//	                               one written as it is (not encoded) is read
//	                               as written: a '+' stays a '+'
//
// An IPv6 host's zone follows "%25", the encoded '%' (RFC 6874), as in
// redis-ring://[fe80::1%25eth0]:6379 (the address [fe80::1%eth0]:6379).
// User name and password may be percent-encoded, and a '#' must be (as
// %23, in an option value too): a URL with a fragment is refused. User
// info without a ':' is refused (write :password@ for a password alone).
// Errors never include the password. The scheme's case does not matter
// (REDIS-RING:// is redis-ring://).
func ParseURL(raw string) (Config, error) {
	var cfg Config
	rawScheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return cfg, fmt.Errorf("%w: URL has no scheme (want redis-ring:// or redis-cluster://)", ErrBadConfig)
	}
	// Schemes are case-insensitive (RFC 3986 3.1): REDIS-RING:// is
	// redis-ring://. Only ASCII letters fold, as net/url does, so no
	// Unicode lookalike (the long s, "\u017f") reads as one of ours.
	scheme := asciiLower(rawScheme)
	switch scheme {
	case "redis-ring", "rediss-ring", schemeSentinel, schemeSentinelTLS:
		cfg.Mode = ModeRing
	case "redis-cluster", "rediss-cluster":
		cfg.Mode = ModeCluster
	default:
		if !mayBeScheme(rawScheme) {
			// What precedes the first "://" is no scheme: a scheme typed
			// without its ':' ("redis-ring//u:pw@h?from=redis-ring://...")
			// runs into the user info. Nothing is quoted: it may hold a
			// password.
			return cfg, fmt.Errorf("%w: URL does not start with a scheme followed by :// (want redis-ring://, redis-cluster://...; not quoted, as it may hold a password)", ErrBadConfig)
		}
		return cfg, fmt.Errorf("%w: unknown URL scheme %q (want redis-ring, rediss-ring, redis-cluster, rediss-cluster, redis-ring+sentinel or rediss-ring+sentinel)", ErrBadConfig, rawScheme)
	}
	if strings.HasPrefix(scheme, "rediss") {
		cfg.Pool.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if strings.Contains(rest, "#") {
		return cfg, errFragment
	}
	rest, query, _ := strings.Cut(rest, "?")
	// With no user info before the first '?' but an '@' after it, a
	// '?' in the password may have cut the user info short: then an
	// option holding an '@' is the rest of the password, never quoted.
	cutPassword := !strings.Contains(rest, "@") && strings.Contains(query, "@")
	rest = strings.TrimSuffix(rest, "/")
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		if err := parseUserInfo(rest[:i], &cfg); err != nil {
			return cfg, err
		}
		rest = rest[i+1:]
	}
	if rest == "" {
		return cfg, fmt.Errorf("%w: URL names no host", ErrBadConfig)
	}
	hosts := strings.Split(rest, ",")
	for i, h := range hosts {
		h, err := unescapeZone(h)
		if strings.IndexByte(hosts[i], '/') >= 0 {
			// redis://h:6379/2 names database 2; no host holds a '/'.
			// Nothing is quoted: it may be a password's part (below).
			err = errURLPath
		} else if err == nil {
			hosts[i] = h
			err = checkHostPort(h)
		}
		if err != nil {
			if !strings.Contains(raw[:len(raw)-len(query)], "@") && strings.Contains(query, "@") {
				// The query holds an '@': an unencoded '?' in the
				// password cut the user info, and h holds part of it.
				return cfg, errQuestionMark
			}
			return cfg, err
		}
	}
	isSentinel := strings.HasSuffix(scheme, "+sentinel")
	if isSentinel {
		if strings.HasPrefix(scheme, "rediss") {
			cfg.Sentinel.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	} else if cfg.Mode == ModeCluster {
		cfg.Seeds = hosts
	} else {
		for _, h := range hosts {
			cfg.Shards = append(cfg.Shards, ring.Shard{Addr: h, Weight: 1})
		}
	}
	if err := checkFromLast(query); err != nil {
		return cfg, err
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		if cutPassword {
			return cfg, errQuestionMark
		}
		var esc url.EscapeError
		if errors.As(err, &esc) {
			// The escape may be in a password (sentinel_password): not quoted.
			return cfg, fmt.Errorf("%w: URL query: a '%%' not followed by two hex digits (write '%%' as %%25)", ErrBadConfig)
		}
		return cfg, fmt.Errorf("%w: URL query: %v", ErrBadConfig, err)
	}
	rawFromAsWritten(query, values)
	if isSentinel {
		entries := values["shards"]
		if err := parseSentinelURL(&cfg, hosts, values); err != nil {
			return cfg, err
		}
		if values.Has("weights") && weightedEntries(entries) {
			// The option would replace the entry's weight without a word.
			return cfg, fmt.Errorf("%w: a %s URL gives weights in its shards entries (HOST:PORT:WEIGHT+NAME) and in the weights option: give them in one place",
				ErrBadConfig, schemeSentinel)
		}
	}
	for name, vals := range values {
		if len(vals) != 1 {
			return cfg, fmt.Errorf("%w: URL option %q given %d times", ErrBadConfig, name, len(vals))
		}
		if isSentinel {
			if ok, err := applySentinelURLOption(&cfg, name, vals[0]); ok {
				if err != nil {
					return cfg, optionError(err, cutPassword, name, vals[0])
				}
				continue
			}
		}
		if err := applyURLOption(&cfg, name, vals[0]); err != nil {
			return cfg, optionError(err, cutPassword, name, vals[0])
		}
	}
	return cfg, cfg.Validate()
}

// checkFromLast refuses a raw URL query whose from option holds a URL
// with options of its own ('?') that is not percent-encoded, followed by
// more options: which URL each of those belongs to cannot be told, and
// they would be read as the outer URL's (the old ring's names or hash
// becoming the new ring's, so that the migration would look for every
// key on the wrong node). Nothing of the query is quoted: the from URL
// may hold a password.
func checkFromLast(query string) error {
	parts := strings.Split(query, "&")
	for _, p := range parts[:len(parts)-1] {
		if k, v, _ := strings.Cut(p, "="); k == "from" && strings.Contains(v, "?") {
			return fmt.Errorf("%w: URL option from holds a URL with options of its own that is not percent-encoded, and options follow it: they would be read as this URL's; percent-encode the from URL (url.QueryEscape), or give it last", ErrBadConfig)
		}
	}
	return nil
}

// rawFromAsWritten sets the from option of values to its text as written
// in the raw query when that holds a URL that is not percent-encoded (a
// literal "://"; url.QueryEscape writes it %3A%2F%2F). Query decoding
// would read such a URL otherwise than written: a '+' as a space (the
// scheme redis-ring+sentinel, a HOST:PORT+NAME shards entry, a password)
// and its own escapes decoded twice (a password's %25 then read as the
// start of another escape). Written as it is, the from URL is decoded
// once, by ParseURL, as every other URL.
func rawFromAsWritten(query string, values url.Values) {
	if len(values["from"]) != 1 {
		return // none, or given twice: refused with the other options
	}
	for _, p := range strings.Split(query, "&") {
		if k, v, _ := strings.Cut(p, "="); k == "from" && strings.Contains(v, "://") {
			values["from"] = []string{v}
		}
	}
}

// weightedEntries reports whether a shards option of a Sentinel URL has
// a plain entry that gives its own weight (HOST:PORT:WEIGHT+NAME).
func weightedEntries(options []string) bool {
	for _, o := range options {
		for _, e := range strings.Split(o, ",") {
			addr := strings.TrimSpace(e)
			if i := strings.IndexFunc(addr, unicode.IsSpace); i >= 0 {
				addr = addr[:i]
			}
			if i := strings.LastIndexByte(addr, ']'); i >= 0 {
				addr = addr[i+1:] // after an IPv6 host: ":PORT[:WEIGHT]"
			}
			if strings.Count(addr, ":") >= 2 {
				return true
			}
		}
	}
	return false
}

// unescapeZone returns the URL host h with the zone of its IPv6 address
// unescaped: a URL writes "[fe80::1%25eth0]" (RFC 6874: the '%' that
// starts the zone is percent-encoded, and so may be the zone's own
// characters), which is the address "[fe80::1%eth0]", as net/url reads
// it. A zone whose '%' "25" does not follow ("[fe80::1%eth0]") is taken
// as written, as before; so "[fe80::1%25]" is refused (an empty zone)
// rather than read as the zone "25".
func unescapeZone(h string) (string, error) {
	if !strings.HasPrefix(h, "[") {
		return h, nil
	}
	end := strings.IndexByte(h, ']')
	pct := strings.IndexByte(h, '%')
	if end < 0 || pct < 0 || pct > end || !strings.HasPrefix(h[pct:end], "%25") {
		return h, nil
	}
	zone, err := url.PathUnescape(h[pct+len("%25") : end])
	if err != nil || zone == "" {
		return "", fmt.Errorf("%w: address %q: the IPv6 zone after %%25 is empty or not valid percent-encoding (write [fe80::1%%25eth0]:6379 for zone eth0)",
			ErrBadConfig, addrkey.Redact(h))
	}
	return h[:pct+1] + zone + h[end:], nil
}

// errURLPath reports a URL with a path after its hosts.
var errURLPath = fmt.Errorf("%w: URL has a path after its hosts: a redis-ring or redis-cluster URL names the database with the db option (?db=2), not as a path (/2)", ErrBadConfig)

// errFragment reports a URL holding a '#'. A '#' starts a URL's fragment
// (RFC 3986 3.5), which names no setting: taking it as part of an option
// value (client_name=x#y) or of a password reads the URL otherwise than
// other clients do, and dropping it would cut a password short. Nothing
// is quoted: the '#' may be in a password.
var errFragment = fmt.Errorf("%w: URL holds a '#', which starts a fragment that names no setting (a '#' in a user name, password or option value must be percent-encoded as %%23; not quoted, as it may be a password)", ErrBadConfig)

// errQuestionMark reports a URL whose user info an unencoded '?' cut.
var errQuestionMark = fmt.Errorf("%w: URL address is not host:port (a '?' in a user name or password must be percent-encoded as %%3F)", ErrBadConfig)

// optionError is err, the error of URL option name=value, unless the
// option holds an '@' in a URL whose user info a '?' may have cut short
// (cutPassword): then it may hold part of the password, and the error
// says so without quoting it. The from option holds a URL of its own,
// whose errors never quote a password.
func optionError(err error, cutPassword bool, name, value string) error {
	if cutPassword && name != "from" && strings.Contains(name+value, "@") {
		return fmt.Errorf("%w: URL option not quoted: it holds an '@', so it may be part of a password (a '?' in a user name or password must be percent-encoded as %%3F)", ErrBadConfig)
	}
	return err
}

func parseUserInfo(info string, cfg *Config) error {
	user, pass, hasPass := strings.Cut(info, ":")
	u, err := url.PathUnescape(user)
	if err != nil {
		return fmt.Errorf("%w: URL user name is not valid percent-encoding", ErrBadConfig)
	}
	if !hasPass && u != "" {
		// Some clients read user info without a ':' as the password
		// alone: it is not quoted.
		return fmt.Errorf("%w: URL user info has no ':' (write user:password@, or :password@ for a password alone; not quoted, as it may be a password)", ErrBadConfig)
	}
	cfg.Pool.Username = u
	if hasPass {
		p, err := url.PathUnescape(pass)
		if err != nil {
			return fmt.Errorf("%w: URL password is not valid percent-encoding", ErrBadConfig)
		}
		cfg.Pool.Password = p
	}
	return nil
}

// checkHostPort accepts the addresses a dial can use (package pool checks
// the same when dialing): host:port with an IPv6 host in brackets, a host
// of the characters of a host name or IP address (checkHostChars), and a port of digits in
// 1..65535 without a leading zero, as a ring's shards (h:06379 dials
// h:6379: one server would pass for two).
func checkHostPort(h string) error {
	if addrkey.HasCredentials(h) {
		return fmt.Errorf("%w: address %q: an address holds no credentials (set Pool.Username and Pool.Password, or give user:password@ in a URL)", ErrBadConfig, addrkey.Redact(h))
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil || host == "" || port == "" {
		if strings.Count(h, ":") > 1 {
			return fmt.Errorf("%w: address %q: want host:port (an IPv6 host in brackets, as [::1]:6379)", ErrBadConfig, h)
		}
		return fmt.Errorf("%w: address %q: want host:port", ErrBadConfig, h)
	}
	if strings.IndexFunc(host, isBlankOrControl) >= 0 {
		return fmt.Errorf("%w: address %q: white space or a control character in the host", ErrBadConfig, h)
	}
	if err := checkHostChars(h, host); err != nil {
		return err
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 || strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("%w: address %q: bad port", ErrBadConfig, h)
	}
	if port[0] == '0' {
		return fmt.Errorf("%w: address %q: port with a leading zero (write it as %d: one server would pass for two)", ErrBadConfig, h, n)
	}
	return nil
}

// checkHostChars refuses a host (of the address h) with a character that
// no host name or IP address holds: nothing decodes a host ("h%2Dx" or
// "h*x" would fail at the dial, far from the config that wrote it). A
// host name is ASCII letters, digits, '-', '.' and '_'; an IPv6 address
// in brackets adds ':', and its zone, after a '%', names an interface
// and may hold any character but white space.
func checkHostChars(h, host string) error {
	name := host
	if strings.HasPrefix(h, "[") {
		name, _, _ = strings.Cut(host, "%")
	}
	i := strings.IndexFunc(name, func(r rune) bool {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '-', r == '.', r == '_':
			return false
		case r == ':':
			return !strings.HasPrefix(h, "[")
		}
		return true
	})
	if i < 0 {
		return nil
	}
	if name[i] == '%' {
		return fmt.Errorf("%w: address %q: a '%%' in the host, which is never decoded (only an IPv6 zone in brackets follows a '%%', as [fe80::1%%25eth0] in a URL)", ErrBadConfig, h)
	}
	return fmt.Errorf("%w: address %q: %q is not a character of a host name or IP address", ErrBadConfig, h, []rune(name[i:])[0])
}

func applyURLOption(cfg *Config, name, v string) error {
	bad := func(err error) error {
		return fmt.Errorf("%w: URL option %s=%q: %v", ErrBadConfig, name, v, err)
	}
	dur := func(dst *time.Duration) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return bad(err)
		}
		*dst = d
		return nil
	}
	num := func(dst *int) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return bad(err)
		}
		*dst = n
		return nil
	}
	flag := func(dst *bool) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return bad(err)
		}
		*dst = b
		return nil
	}
	ringOnly := func() error {
		if cfg.Mode != ModeRing {
			return fmt.Errorf("%w: URL option %s is for ring mode only", ErrBadConfig, name)
		}
		return nil
	}
	p := &cfg.Pool
	switch name {
	case "hash", "key_hash", "tag", "names", "weights", "auto_eject":
		if err := ringOnly(); err != nil {
			return err
		}
	case "refresh_interval", "min_refresh_interval", "max_redirects", "max_retry_wait", "read_from":
		if cfg.Mode != ModeCluster {
			return fmt.Errorf("%w: URL option %s is for cluster mode only", ErrBadConfig, name)
		}
	}
	switch name {
	case "hash":
		cfg.Hash = ring.Algorithm(v)
	case "key_hash":
		cfg.KeyHash = v
	case "tag":
		// twemproxy takes any two characters as a hash_tag, "++" and
		// "&&" among them; written as they are, the query reads them as
		// two spaces and as an empty value (the algorithm's default
		// rule), each placing keys elsewhere than the pool without a word.
		switch {
		case v == "":
			return bad(errors.New(`empty tag (leave the option out for the algorithm's default rule; a '&' of a pair is written %26, "&&" as %26%26)`))
		case strings.ContainsRune(v, ' '):
			return bad(errors.New(`a '+' in a URL query reads as a space, and a URL takes no tag with spaces: write a '+' of a pair as %2B, "++" as %2B%2B`))
		}
		cfg.Tag = v
	case "names":
		names := strings.Split(v, ",")
		if len(names) != len(cfg.Shards) {
			return bad(fmt.Errorf("%d names for %d hosts", len(names), len(cfg.Shards)))
		}
		for i, n := range names {
			// A name is the shard's place on the ring: " b" places keys
			// elsewhere than "b", and a space after a comma is a typo.
			if strings.TrimSpace(n) != n {
				return bad(fmt.Errorf("name %d %q has white space around it", i, n))
			}
			// An empty name ("a,,c") would leave the shard placed by
			// its address: a typo that moves keys.
			if n == "" {
				return bad(fmt.Errorf("name %d is empty (give every host a name, or leave names out)", i))
			}
			cfg.Shards[i].Name = n
		}
	case "weights":
		ws := strings.Split(v, ",")
		if len(ws) != len(cfg.Shards) {
			return bad(fmt.Errorf("%d weights for %d hosts", len(ws), len(cfg.Shards)))
		}
		for i, w := range ws {
			n, err := strconv.Atoi(w)
			if err != nil {
				return bad(err)
			}
			cfg.Shards[i].Weight = n
		}
	case "db":
		return num(&p.DB)
	case "dial_timeout":
		return dur(&p.DialTimeout)
	case "read_timeout":
		return dur(&p.ReadTimeout)
	case "write_timeout":
		return dur(&p.WriteTimeout)
	case "idle_timeout":
		if v == neverWord {
			p.IdleTimeout = pool.Never
			return nil
		}
		return dur(&p.IdleTimeout)
	case "max_conn_lifetime":
		return dur(&p.MaxConnLifetime)
	case "test_on_borrow":
		if v == neverWord {
			p.TestOnBorrow = pool.Never
			return nil
		}
		return dur(&p.TestOnBorrow)
	case "max_idle":
		return num(&p.MaxIdle)
	case "max_active":
		return num(&p.MaxActive)
	case "wait":
		return flag(&p.Wait)
	case "client_name":
		p.ClientName = v
	case "auto_pipeline":
		on := true
		if err := flag(&on); err != nil {
			return err
		}
		cfg.DisableAutoPipeline = !on
	case "health_interval":
		return dur(&cfg.Health.Interval)
	case "health_timeout":
		return dur(&cfg.Health.Timeout)
	case "failure_limit":
		return num(&cfg.Health.FailureLimit)
	case "auto_eject":
		return flag(&cfg.Health.AutoEject)
	case "refresh_interval":
		return dur(&cfg.Cluster.RefreshInterval)
	case "min_refresh_interval":
		return dur(&cfg.Cluster.MinRefreshInterval)
	case "max_redirects":
		return num(&cfg.Cluster.MaxRedirects)
	case "max_retry_wait":
		return dur(&cfg.Cluster.MaxRetryWait)
	case "read_from":
		cfg.Cluster.ReadFrom = ReadPolicy(v)
	case "from":
		return applyMigrationURL(cfg, v)
	default:
		return fmt.Errorf("%w: unknown URL option %q", ErrBadConfig, name)
	}
	return nil
}

// mayBeScheme reports whether s may be meant as a URL's scheme, known or
// not: it holds none of the delimiters of a URL's other parts (RFC 3986
// gen-delims: ":/?#[]@"), so that no user info typed after a scheme that
// lacks its ':' reads as part of it.
func mayBeScheme(s string) bool {
	return s != "" && !strings.ContainsAny(s, ":/?#[]@")
}

// asciiLower returns s with its ASCII upper-case letters lowered, and
// every other byte as it is.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
