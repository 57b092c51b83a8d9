package shard

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shardis/shardis/ring"
)

// The URL schemes of a ring whose hosts are Sentinels.
const (
	schemeSentinel    = "redis-ring+sentinel"
	schemeSentinelTLS = "rediss-ring+sentinel"
)

// parseSentinelURL reads the part of a redis-ring+sentinel URL that the
// other schemes do not have: the hosts are the Sentinels, and the shards
// option lists the shards in ring order.
func parseSentinelURL(cfg *Config, hosts []string, values url.Values) error {
	cfg.Sentinel.Addrs = hosts
	list := values["shards"]
	if len(list) != 1 || strings.TrimSpace(list[0]) == "" {
		return fmt.Errorf("%w: a %s URL needs one shards option (shards=NAME[=MASTER],HOST:PORT[:WEIGHT]+NAME,...)", ErrBadConfig, schemeSentinel)
	}
	delete(values, "shards")
	for i, entry := range strings.Split(list[0], ",") {
		entry = strings.TrimSpace(entry)
		if strings.Contains(entry, ":") && !strings.ContainsFunc(entry, unicode.IsSpace) {
			// HOST:PORT[:WEIGHT]+NAME with its '+' percent-encoded (%2B,
			// as url.Values.Encode writes it) reaches here as a '+'. No
			// host, port or weight holds one: the first '+' is the
			// separator that the query would have read as a space (an
			// IPv6 zone may hold a '+': the search starts after the ']').
			from := strings.LastIndexByte(entry, ']') + 1
			if i := strings.IndexByte(entry[from:], '+'); i >= 0 {
				entry = entry[:from+i] + " " + entry[from+i+1:]
			}
		}
		if strings.Contains(entry, ":") {
			plain, err := ring.ParseShards(entry)
			if err != nil {
				// The list parsed is this one entry: the ring's "entry 0"
				// would name the wrong one.
				msg := strings.TrimPrefix(plainMessage(err), "bad shard list: entry 0 ")
				return &configError{cause: err, msg: fmt.Sprintf("URL shards entry %d: %s", i, msg)}
			}
			cfg.Shards = append(cfg.Shards, plain...)
			continue
		}
		name, master, hasMaster := strings.Cut(entry, "=")
		if name == "" {
			return fmt.Errorf("%w: URL shards entry %d %q: want NAME[=MASTER] or HOST:PORT[:WEIGHT] NAME", ErrBadConfig, i, entry)
		}
		// "a=" (a master name left out, as a template whose variable was
		// never filled in writes it) would watch the master set named a,
		// which may be another shard's: the '=' says a master is meant.
		if hasMaster && master == "" {
			return fmt.Errorf("%w: URL shards entry %d %q: empty master name after '=' (write NAME=MASTER, or NAME alone when the master set has the shard's name)", ErrBadConfig, i, entry)
		}
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: name, Weight: 1})
		cfg.Sentinel.Shards = append(cfg.Sentinel.Shards, SentinelShard{Name: name, MasterName: master})
	}
	if v := values["names"]; v != nil {
		return fmt.Errorf("%w: a %s URL names its shards in the shards option", ErrBadConfig, schemeSentinel)
	}
	return nil
}

// applySentinelURLOption handles the options of Sentinel URLs. It reports
// false for an option it does not know. Errors never quote a password.
func applySentinelURLOption(cfg *Config, name, v string) (bool, error) {
	o := &cfg.Sentinel
	dur := func(dst *time.Duration) (bool, error) {
		d, err := time.ParseDuration(v)
		if err != nil {
			return true, fmt.Errorf("%w: URL option %s=%q: %v", ErrBadConfig, name, v, err)
		}
		*dst = d
		return true, nil
	}
	switch name {
	case "sentinel_username":
		o.Username = v
	case "sentinel_password":
		o.Password = v
	case "sentinel_tls":
		on, err := strconv.ParseBool(v)
		if err != nil {
			return true, fmt.Errorf("%w: URL option %s=%q: want true or false", ErrBadConfig, name, v)
		}
		o.TLSConfig = nil
		if on {
			o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	case "read_from":
		o.ReadFrom = ReadPolicy(v)
	case "sentinel_refresh_interval":
		return dur(&o.RefreshInterval)
	case "sentinel_min_refresh_interval":
		return dur(&o.MinRefreshInterval)
	case "sentinel_timeout":
		return dur(&o.Timeout)
	case "failover_wait":
		return dur(&o.FailoverWait)
	default:
		return false, nil
	}
	return true, nil
}
