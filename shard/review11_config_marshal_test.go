package shard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// encodeAll encodes v with encoding/json, yaml.Marshal and slog's
// JSONHandler, reporting an error or a panic of either as a failure.
func encodeAll(t *testing.T, v any) (j, y, logged string) {
	t.Helper()
	jb, err := json.Marshal(v)
	if err != nil {
		t.Errorf("json.Marshal(%T): %v", v, err)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("yaml.Marshal(%T) panicked: %v", v, p)
			}
		}()
		yb, err := yaml.Marshal(v)
		if err != nil {
			t.Errorf("yaml.Marshal(%T): %v", v, err)
		}
		y = string(yb)
	}()
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", v)
	if strings.Contains(buf.String(), "!ERROR") {
		t.Errorf("slog's JSONHandler could not encode %T: %s", v, buf.String())
	}
	return string(jb), y, buf.String()
}

// TestReview11ConfigEncodesWithoutSecrets: a Config logged at start-up
// with encoding/json (or slog's JSONHandler, zap) gave "json: unsupported
// type: shard.HealthCheck", whatever it held, and yaml.Marshal panicked:
// a HealthCheck, the Hooks and a Router are functions and interfaces no
// encoder takes. The options inside it encode without their passwords,
// and Config now does too: every field under its own name, a set
// HealthCheck as its function's name, the Hooks as the names of those
// set, a Router as its type, and credentials pasted into an address
// (Shards, Seeds, Migration) as xxxxx@host:port, as fmt shows them.
// Decoding is unchanged, and a file is read by LoadConfig as before.
func TestReview11ConfigEncodesWithoutSecrets(t *testing.T) {
	const poolPW, addrPW, seedPW, fromPW, migPW, sentPW = "pool-S3cret", "addr-S3cret", "seed-S3cret", "from-S3cret", "mig-S3cret", "sent-S3cret"
	cfg := shard.Config{
		Shards:   []ring.Shard{{Name: "a", Addr: "user:" + addrPW + "@127.0.0.1:6379", Weight: 2}, {Name: "s", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: []string{"127.0.0.1:26379"}, Password: sentPW, Shards: []shard.SentinelShard{{Name: "s"}}},
		Seeds:    []string{"u:" + seedPW + "@127.0.0.1:7000"},
		Pool:     pool.Options{Username: "alice", Password: poolPW, DialTimeout: time.Second},
		Health:   shard.HealthOptions{Interval: time.Second, Check: shard.CheckReplication},
		Hooks:    &shard.Hooks{Panic: func(*shard.PanicError) {}, Dial: func(context.Context, *shard.DialEvent) {}},
		Migration: &shard.Migration{
			From:  &shard.Config{Shards: []ring.Shard{{Addr: "u:" + fromPW + "@127.0.0.1:6380", Weight: 1}}},
			Addrs: map[string]string{"127.0.0.1:6379": "u:" + migPW + "@10.0.0.1:6379"},
		},
	}
	for _, v := range []any{cfg, &cfg, []shard.Config{cfg}} {
		j, y, logged := encodeAll(t, v)
		for _, out := range []struct{ how, text string }{{"json", j}, {"yaml", y}, {"slog", logged}} {
			for _, s := range []string{poolPW, addrPW, seedPW, fromPW, migPW, sentPW} {
				if strings.Contains(out.text, s) {
					t.Errorf("%s of %T shows a secret (%s): %s", out.how, v, s, out.text)
				}
			}
			for _, want := range []string{"xxxxx@127.0.0.1:6379", "xxxxx@127.0.0.1:7000", "xxxxx@127.0.0.1:6380", "xxxxx@10.0.0.1:6379",
				"***", "alice", "shard.CheckReplication", "Panic", "Dial"} {
				if !strings.Contains(out.text, want) {
					t.Errorf("%s of %T lacks %q: %s", out.how, v, want, out.text)
				}
			}
		}
	}

	// Every field, under its own name and in order.
	j, _, _ := encodeAll(t, cfg)
	last := -1
	for f := range reflect.TypeFor[shard.Config]().Fields() {
		at := strings.Index(j, `"`+f.Name+`":`)
		if at < 0 || at < last {
			t.Errorf("the JSON lacks %s or has it out of order: %s", f.Name, j)
		}
		last = at
	}

	// A Router shows as its type; no Router, HealthCheck or Hooks as null.
	j, _, _ = encodeAll(t, shard.Config{Router: &flakyNodesRouter{}})
	if !strings.Contains(j, `"Router":"*shard_test.flakyNodesRouter"`) {
		t.Errorf("JSON of a Config with a Router: %s", j)
	}

	// Decoding is unchanged: a config with nothing hidden comes back as it
	// was, from JSON and from YAML.
	// Every field but the hidden ones is set, so that one not copied
	// into the encoding fails here.
	plain := shard.Config{
		Mode:                shard.ModeRing,
		Shards:              []ring.Shard{{Name: "a", Addr: "127.0.0.1:6379", Weight: 2}},
		Sentinel:            shard.SentinelOptions{Addrs: []string{"127.0.0.1:26379"}, Shards: []shard.SentinelShard{{Name: "s", MasterName: "m"}}, FailoverWait: time.Second},
		Hash:                ring.Ketama,
		KeyHash:             "fnv1a_64",
		Tag:                 "{}",
		Seeds:               []string{"127.0.0.1:7000"},
		Cluster:             shard.ClusterOptions{RefreshInterval: time.Minute, MinRefreshInterval: time.Second, MaxRedirects: 3, MaxRetryWait: time.Second, ReadFrom: shard.ReadReplicaRandom},
		Pool:                pool.Options{Username: "alice", DB: 2, ReadTimeout: time.Second},
		DisableAutoPipeline: true,
		Health:              shard.HealthOptions{Interval: time.Second, FailureLimit: 5, Timeout: time.Second, AutoEject: true},
		Migration: &shard.Migration{
			From:  &shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6380", Weight: 1}}},
			Addrs: map[string]string{"127.0.0.1:6379": "10.0.0.1:6379"},
			Armed: true,
		},
	}
	jb, err := json.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	var back shard.Config
	if err := json.Unmarshal(jb, &back); err != nil || !reflect.DeepEqual(back, plain) {
		t.Errorf("JSON round trip: %+v, %v; want %+v (%s)", back, err, plain, jb)
	}
	yb, err := yaml.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	back = shard.Config{}
	if err := yaml.Unmarshal(yb, &back); err != nil {
		t.Fatal(err)
	}
	// YAML writes a nil list as [] (an empty one back): the decoded
	// config encodes as the first did.
	again, err := yaml.Marshal(back)
	if err != nil || string(again) != string(yb) || back.Pool.Username != "alice" || back.Cluster.ReadFrom != shard.ReadReplicaRandom {
		t.Errorf("YAML round trip: %s, %v; want %s", again, err, yb)
	}

	// A file written by hand is read as before.
	path := filepath.Join(t.TempDir(), "shardis.yaml")
	if err := os.WriteFile(path, []byte("shards:\n  - {addr: \"127.0.0.1:6379\", name: a, weight: 2}\npool:\n  username: alice\n  password: p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := shard.LoadConfig(path)
	if err != nil || len(got.Shards) != 1 || got.Shards[0].Addr != "127.0.0.1:6379" || got.Pool.Password != "p" {
		t.Errorf("LoadConfig = %+v, %v", got, err)
	}
}
