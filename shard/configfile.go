package shard

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"go.yaml.in/yaml/v3"
)

// fileConfig is the YAML/JSON form of Config. JSON is read as YAML.
type fileConfig struct {
	URL     string `yaml:"url"`
	Mode    Mode   `yaml:"mode"`
	Hash    string `yaml:"hash"`
	KeyHash string `yaml:"key_hash"`
	Tag     string `yaml:"tag"`
	Shards  []struct {
		Addr     string             `yaml:"addr"`
		Name     string             `yaml:"name"`
		Weight   *int               `yaml:"weight"`
		Sentinel *fileSentinelShard `yaml:"sentinel"`
	} `yaml:"shards"`
	Sentinel     fileSentinel `yaml:"sentinel"`
	Seeds        []string     `yaml:"seeds"`
	AutoPipeline *bool        `yaml:"auto_pipeline"`
	Cluster      struct {
		RefreshInterval    *duration `yaml:"refresh_interval"`
		MinRefreshInterval *duration `yaml:"min_refresh_interval"`
		MaxRedirects       *int      `yaml:"max_redirects"`
		MaxRetryWait       *duration `yaml:"max_retry_wait"`
		ReadFrom           string    `yaml:"read_from"`
	} `yaml:"cluster"`
	Pool struct {
		MaxIdle         *int           `yaml:"max_idle"`
		MaxActive       *int           `yaml:"max_active"`
		IdleTimeout     *neverDuration `yaml:"idle_timeout"`
		MaxConnLifetime *duration      `yaml:"max_conn_lifetime"`
		Wait            *bool          `yaml:"wait"`
		TestOnBorrow    *neverDuration `yaml:"test_on_borrow"`
		DialTimeout     *duration      `yaml:"dial_timeout"`
		ReadTimeout     *duration      `yaml:"read_timeout"`
		WriteTimeout    *duration      `yaml:"write_timeout"`
		Username        string         `yaml:"username"`
		Password        string         `yaml:"password"`
		PasswordEnv     string         `yaml:"password_env"`
		DB              *int           `yaml:"db"`
		ClientName      string         `yaml:"client_name"`
		TLS             *fileTLS       `yaml:"tls"`
	} `yaml:"pool"`
	Migration *fileMigration `yaml:"migration"`
	Health    struct {
		Interval     *duration `yaml:"interval"`
		FailureLimit *int      `yaml:"failure_limit"`
		Timeout      *duration `yaml:"timeout"`
		AutoEject    *bool     `yaml:"auto_eject"`
	} `yaml:"health"`
}

// fileTLS is a tls: section. Present, even empty (tls: {}, or tls:
// with nothing after it), it turns TLS on.
type fileTLS struct {
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
}

// duration reads "500ms", "3s" and the like.
type duration time.Duration

func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %q is not a duration such as 500ms or 3s", n.Line, n.Value)
	}
	*d = duration(v)
	return nil
}

// neverDuration is a duration that may also be "never" (pool.Never, as
// fmt prints a Config), for the pool options that take it: idle_timeout
// and test_on_borrow.
type neverDuration duration

func (d *neverDuration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == neverWord {
		*d = neverDuration(pool.Never)
		return nil
	}
	return (*duration)(d).UnmarshalYAML(n)
}

// neverWord is how files and URLs write pool.Never.
const neverWord = "never"

// LoadConfig reads a Config from a YAML or JSON file. A shard entry with
// a sentinel: {master, addrs, username, password, password_env, tls}
// section and a name instead of an addr is a Sentinel shard; the
// top-level sentinel: section holds the defaults (addrs, credentials,
// tls) and read_from, refresh_interval, min_refresh_interval, timeout and
// failover_wait. Besides the fields
// of Config in snake case (mode, shards: [{addr, name, weight}], hash,
// key_hash, tag, seeds, auto_pipeline, pool: {...}, health: {...}), a file may give a
// url (as ParseURL) that the other fields then refine: a setting given
// (even 0 or false) overrides the URL's, and the shards and seeds listed
// are added after the URL's hosts. pool.password_env
// names an environment variable holding the password, so the file need not
// hold the secret. pool.tls: {ca_file, cert_file, key_file, server_name}
// turns TLS on.
func LoadConfig(path string) (Config, error) { return loadConfig(path, nil) }

// loadConfig is LoadConfig; reading lists the files whose migration
// from_file led here, so that a loop back to one of them is an error.
func loadConfig(path string, reading []string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, badConfigf("%w", err)
	}
	cfg, err := parseConfig(data, append(reading[:len(reading):len(reading)], path))
	if err != nil {
		return Config{}, badConfigf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads a Config from YAML or JSON bytes, as LoadConfig.
// Unknown fields are errors that name the field by its path and list the
// names accepted there; an empty document is an error.
func ParseConfig(data []byte) (Config, error) { return parseConfig(data, nil) }

// parseConfig is ParseConfig for a document read from the files reading
// (the last one holds data; none for bytes).
func parseConfig(data []byte, reading []string) (Config, error) {
	fc, err := decodeFile(data)
	if err != nil {
		return Config{}, err
	}
	var cfg Config
	if fc.URL != "" {
		if cfg, err = ParseURL(fc.URL); err != nil {
			return Config{}, badFieldf("url", "url: %w", err)
		}
	}
	if fc.Mode != "" {
		cfg.Mode = fc.Mode
	}
	if fc.Hash != "" {
		cfg.Hash = ring.Algorithm(fc.Hash)
	}
	if fc.KeyHash != "" {
		cfg.KeyHash = fc.KeyHash
	}
	if fc.AutoPipeline != nil {
		cfg.DisableAutoPipeline = !*fc.AutoPipeline
	}
	if fc.Tag != "" {
		cfg.Tag = fc.Tag
	}
	firstShard := len(cfg.Shards)
	for _, s := range fc.Shards {
		w := 1 // an omitted weight is 1; an explicit 0 is refused by Validate
		if s.Weight != nil {
			w = *s.Weight
		}
		cfg.Shards = append(cfg.Shards, ring.Shard{Addr: s.Addr, Name: s.Name, Weight: w})
	}
	if err := applySentinelFile(&cfg, &fc, firstShard); err != nil {
		return Config{}, err
	}
	cfg.Seeds = append(cfg.Seeds, fc.Seeds...)
	cl, fcl := &cfg.Cluster, fc.Cluster
	setDur(&cl.RefreshInterval, fcl.RefreshInterval)
	setDur(&cl.MinRefreshInterval, fcl.MinRefreshInterval)
	setDur(&cl.MaxRetryWait, fcl.MaxRetryWait)
	setInt(&cl.MaxRedirects, fcl.MaxRedirects)
	if fcl.ReadFrom != "" {
		cl.ReadFrom = ReadPolicy(fcl.ReadFrom)
	}
	p, fp := &cfg.Pool, fc.Pool
	setInt(&p.MaxIdle, fp.MaxIdle)
	setInt(&p.MaxActive, fp.MaxActive)
	setInt(&p.DB, fp.DB)
	setDur(&p.IdleTimeout, (*duration)(fp.IdleTimeout))
	setDur(&p.MaxConnLifetime, fp.MaxConnLifetime)
	setDur(&p.TestOnBorrow, (*duration)(fp.TestOnBorrow))
	setDur(&p.DialTimeout, fp.DialTimeout)
	setDur(&p.ReadTimeout, fp.ReadTimeout)
	setDur(&p.WriteTimeout, fp.WriteTimeout)
	setVal(&p.Wait, fp.Wait)
	if fp.Username != "" {
		p.Username = fp.Username
	}
	if fp.Password != "" {
		p.Password = fp.Password
	}
	if fp.PasswordEnv != "" {
		if fp.Password != "" {
			return Config{}, badFieldf("pool.password_env", "pool: give password or password_env, not both")
		}
		pw, err := passwordFromEnv("pool", fp.PasswordEnv)
		if err != nil {
			return Config{}, err
		}
		p.Password = pw
	}
	if fp.ClientName != "" {
		p.ClientName = fp.ClientName
	}
	if t := fp.TLS; t != nil {
		tc, err := loadTLS("pool.tls", t)
		if err != nil {
			return Config{}, err
		}
		p.TLSConfig = tc
	}
	h, fh := &cfg.Health, fc.Health
	setDur(&h.Interval, fh.Interval)
	setDur(&h.Timeout, fh.Timeout)
	setInt(&h.FailureLimit, fh.FailureLimit)
	setVal(&h.AutoEject, fh.AutoEject)
	if err := fc.Migration.apply(&cfg, reading); err != nil {
		return Config{}, err
	}
	if err := checkModeFields(cfg, &fc); err != nil {
		return Config{}, err
	}
	return cfg, cfg.Validate()
}

// setVal, setInt and setDur set a field that the file gives, even to
// zero or false: an explicit value in the file overrides the url's.
func setVal[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func setInt(dst *int, v *int) { setVal(dst, v) }

func setDur(dst *time.Duration, v *duration) {
	if v != nil {
		*dst = time.Duration(*v)
	}
}

// loadTLS builds the TLS configuration of the tls block at where
// (pool.tls, sentinel.tls, shards[i].sentinel.tls), which its errors name.
func loadTLS(where string, t *fileTLS) (*tls.Config, error) {
	for _, f := range []struct{ name, path string }{{"ca_file", t.CAFile}, {"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
		if looksLikePEM(f.path) {
			// The file's contents pasted in place of its path: an error
			// opening it would quote them, a private key among them.
			return nil, badFieldf(where+"."+f.name, "%s.%s holds PEM contents, not a file's path (not quoted, as it may be a private key): give the path of a file holding them", where, f.name)
		}
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, badFieldf(where+".ca_file", "%s.ca_file: %w", where, err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, badFieldf(where+".ca_file", "%s.ca_file %s holds no PEM certificate", where, t.CAFile)
		}
		tc.RootCAs = roots
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, badFieldf(where+".key_file", "%s.cert_file and %s.key_file go together", where, where)
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, badFieldf(where+".cert_file", "%s client certificate: %w", where, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// looksLikePEM reports whether path is rather a PEM block (or a line of
// one) than a file's path.
func looksLikePEM(path string) bool {
	return strings.Contains(path, "-----BEGIN") || strings.Contains(path, "-----END") || strings.ContainsAny(path, "\n\r")
}

// checkModeFields refuses the fields of a file that the config's mode
// would ignore, as ParseURL refuses such options.
func checkModeFields(cfg Config, fc *fileConfig) error {
	if cfg.Mode == ModeCluster {
		switch {
		case fc.Hash != "" || fc.KeyHash != "" || fc.Tag != "":
			return badConfigf("hash, key_hash and tag are for ring mode only")
		case fc.Health.AutoEject != nil && *fc.Health.AutoEject:
			return badConfigf("health.auto_eject is for ring mode only")
		}
	} else {
		// A ring-mode file may keep a cluster section (a template for
		// both modes), but not a misspelt read policy in it.
		switch ReadPolicy(fc.Cluster.ReadFrom) {
		case "", ReadMaster, ReadReplicaRandom, ReadReplicaLatency:
		default:
			return badFieldf("cluster.read_from", "cluster.read_from %q is not a read policy (want %q, %q or %q)",
				fc.Cluster.ReadFrom, ReadMaster, ReadReplicaRandom, ReadReplicaLatency)
		}
	}
	if len(cfg.Sentinel.Shards) == 0 && !reflect.ValueOf(fc.Sentinel).IsZero() {
		return badConfigf("the sentinel section needs Sentinel shards (a shard with a name, no addr and a sentinel section)")
	}
	return nil
}

// passwordFromEnv reads the password that where's password_env names. A
// variable that is not set, or set to nothing, is refused: password_env
// says a password is wanted, and an empty one (a secret that was never
// filled in) would log in without one, or fail later as a refused login
// far from its cause.
//
// The variable is quoted only when written as environment variables'
// names are by convention (envNameLike): anything else may be the
// password itself, written in password_env by mistake.
func passwordFromEnv(where, name string) (string, error) {
	pw, ok := os.LookupEnv(name)
	if ok && pw != "" {
		return pw, nil
	}
	state := "not set"
	if ok {
		state = "empty"
	}
	if !envNameLike(name) {
		return "", badFieldf(where+".password_env", "%s.password_env names a variable that is %s (not quoted: it is not written as a variable's name, A-Z, 0-9 and _, and may be the password itself; password_env takes the name, as REDIS_PASSWORD)", where, state)
	}
	return "", badFieldf(where+".password_env", "%s.password_env names %s, which is %s", where, name, state)
}

// envNameLike reports whether name is written as environment variables'
// names are by convention: upper-case ASCII letters, digits and '_', not
// starting with a digit.
func envNameLike(name string) bool {
	for i, c := range []byte(name) {
		if !('A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return name != ""
}
