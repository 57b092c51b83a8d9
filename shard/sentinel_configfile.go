package shard

import (
	"fmt"
)

// fileSentinelAuth is the credential part of a file's Sentinel settings.
type fileSentinelAuth struct {
	Username    string   `yaml:"username"`
	Password    string   `yaml:"password"`
	PasswordEnv string   `yaml:"password_env"`
	TLS         *fileTLS `yaml:"tls"`
}

// fileSentinel is the top-level sentinel: section of a config file.
type fileSentinel struct {
	Addrs              []string `yaml:"addrs"`
	fileSentinelAuth   `yaml:",inline"`
	ReadFrom           string    `yaml:"read_from"`
	RefreshInterval    *duration `yaml:"refresh_interval"`
	MinRefreshInterval *duration `yaml:"min_refresh_interval"`
	Timeout            *duration `yaml:"timeout"`
	FailoverWait       *duration `yaml:"failover_wait"`
}

// fileSentinelShard is a shard entry's sentinel: section.
type fileSentinelShard struct {
	Master           string   `yaml:"master"`
	Addrs            []string `yaml:"addrs"`
	fileSentinelAuth `yaml:",inline"`
}

// apply fills in the credentials of a, with where naming the section for
// errors.
func (a fileSentinelAuth) apply(where string, user, password *string, tlsOn *bool) (err error) {
	// Only what the section gives overrides: a section naming a user
	// keeps the password a URL gave (sentinel_password).
	if a.Username != "" {
		*user = a.Username
	}
	if a.Password != "" {
		*password = a.Password
	}
	if a.PasswordEnv != "" {
		if a.Password != "" {
			return badFieldf(where+".password_env", "%s: give password or password_env, not both", where)
		}
		pw, err := passwordFromEnv(where, a.PasswordEnv)
		if err != nil {
			return err
		}
		*password = pw
	}
	*tlsOn = a.TLS != nil
	return nil
}

// applySentinelFile reads the Sentinel settings of a config file: the
// sentinel: section and the shard entries with a sentinel: section
// (which have a name and no addr). first is the index in cfg.Shards of
// the file's first shard.
func applySentinelFile(cfg *Config, fc *fileConfig, first int) error {
	fs := fc.Sentinel
	o := &cfg.Sentinel
	if len(fs.Addrs) > 0 {
		o.Addrs = fs.Addrs
	}
	var tlsOn bool
	if fs.Username != "" || fs.Password != "" || fs.PasswordEnv != "" || fs.TLS != nil {
		if err := fs.apply("sentinel", &o.Username, &o.Password, &tlsOn); err != nil {
			return err
		}
		if tlsOn {
			tc, err := loadTLS("sentinel.tls", fs.TLS)
			if err != nil {
				return err
			}
			o.TLSConfig = tc
		}
	}
	if fs.ReadFrom != "" {
		o.ReadFrom = ReadPolicy(fs.ReadFrom)
	}
	setDur(&o.RefreshInterval, fs.RefreshInterval)
	setDur(&o.MinRefreshInterval, fs.MinRefreshInterval)
	setDur(&o.Timeout, fs.Timeout)
	setDur(&o.FailoverWait, fs.FailoverWait)
	for i, s := range fc.Shards {
		if s.Sentinel == nil {
			continue
		}
		if s.Addr != "" {
			return fmt.Errorf("%w: shard %d (%q) has both an addr and a sentinel section", ErrBadConfig, i, s.Name)
		}
		ss := SentinelShard{Name: s.Name, MasterName: s.Sentinel.Master, Addrs: s.Sentinel.Addrs}
		where := fmt.Sprintf("shards[%d].sentinel", i)
		if err := s.Sentinel.apply(where, &ss.Username, &ss.Password, &tlsOn); err != nil {
			return err
		}
		if tlsOn {
			tc, err := loadTLS(where+".tls", s.Sentinel.TLS)
			if err != nil {
				return err
			}
			ss.TLSConfig = tc
		}
		o.Shards = append(o.Shards, ss)
		cfg.Shards[first+i].Addr = ""
	}
	return nil
}
