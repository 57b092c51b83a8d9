package shard

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
)

// MarshalJSON encodes c as encoding/json encodes a struct, field by
// field, so that a configuration can be logged (slog's JSONHandler, zap):
// a set password is "***" (Pool and Sentinel encode by their own
// MarshalJSON), credentials pasted into an address (Shards, Seeds,
// Migration) show as xxxxx@host:port, as fmt shows them, and the fields
// no encoder takes are described: Health.Check as its function's name,
// Hooks as the names of the hooks set, Router as its type, each null
// when unset. Decoding is unchanged (a Config with none of these decodes
// back as it was); LoadConfig reads files of its own form (docs/config.md).
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.fields()) }

// MarshalYAML is MarshalJSON for the YAML encoders (go.yaml.in/yaml/v3,
// gopkg.in/yaml.v2 and v3).
func (c Config) MarshalYAML() (any, error) { return c.fields(), nil }

// configFields is what the encoders see of Config: the same fields in the
// same order.
type configFields struct {
	Mode                Mode
	Shards              []shardFields
	Sentinel            SentinelOptions
	Hash                ring.Algorithm
	KeyHash             string
	Tag                 string
	Seeds               []string
	Cluster             ClusterOptions
	Pool                pool.Options
	DisableAutoPipeline bool
	Health              healthFields
	Hooks               any // nil, or the names of the hooks set
	Router              any // nil, or the Router's type
	Migration           *migrationFields
}

// shardFields is a ring.Shard with credentials in its address redacted.
type shardFields struct {
	Name   string
	Addr   string
	Weight int
}

type healthFields struct {
	Interval     time.Duration
	FailureLimit int
	Timeout      time.Duration
	AutoEject    bool
	Check        any // nil, or the function's name
}

type migrationFields struct {
	From  *Config
	Addrs map[string]string
	Armed bool
}

func (c Config) fields() configFields {
	f := configFields{
		Mode: c.Mode, Sentinel: c.Sentinel, Hash: c.Hash, KeyHash: c.KeyHash, Tag: c.Tag,
		Seeds: redactAddrs(c.Seeds), Cluster: c.Cluster, Pool: c.Pool, DisableAutoPipeline: c.DisableAutoPipeline,
		Health: healthFields{Interval: c.Health.Interval, FailureLimit: c.Health.FailureLimit,
			Timeout: c.Health.Timeout, AutoEject: c.Health.AutoEject},
	}
	if c.Shards != nil {
		f.Shards = make([]shardFields, len(c.Shards))
		for i, s := range c.Shards {
			f.Shards[i] = shardFields{Name: s.Name, Addr: addrkey.Redact(s.Addr), Weight: s.Weight}
		}
	}
	if c.Health.Check != nil {
		f.Health.Check = funcName(c.Health.Check)
	}
	if c.Hooks != nil {
		set := []string{}
		v := reflect.ValueOf(*c.Hooks)
		for i := range v.NumField() {
			if v.Field(i).Kind() == reflect.Func && !v.Field(i).IsNil() {
				set = append(set, v.Type().Field(i).Name)
			}
		}
		f.Hooks = set
	}
	if c.Router != nil {
		f.Router = fmt.Sprintf("%T", c.Router)
	}
	if m := c.Migration; m != nil {
		f.Migration = &migrationFields{From: m.From, Addrs: m.Addrs, Armed: m.Armed}
		if m.Addrs != nil {
			f.Migration.Addrs = make(map[string]string, len(m.Addrs))
			for k, v := range maps.All(m.Addrs) {
				f.Migration.Addrs[addrkey.Redact(k)] = addrkey.Redact(v)
			}
		}
	}
	return f
}

// funcName is the name of the function f holds ("pkg.Func", or
// "pkg.Outer.func1" for a closure).
func funcName(f any) string {
	if fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer()); fn != nil {
		return fn.Name()
	}
	return fmt.Sprintf("%T", f)
}
