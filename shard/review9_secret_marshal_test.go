package shard_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// TestReview9SecretsStayOutOfJSONAndYAML: String and GoString of the
// options that hold passwords show them as ***, but encoding/json and the
// YAML encoders print every field as it is: a program logging its pool
// options with slog's JSONHandler (or zap, which encodes with
// encoding/json) wrote the data nodes' password, and the Sentinels'
// passwords likewise; with a TLSConfig set the encoding failed instead.
// Passwords now show as *** there too, a TLSConfig as its ServerName and
// InsecureSkipVerify (never a key); the other fields are encoded as
// before.
func TestReview9SecretsStayOutOfJSONAndYAML(t *testing.T) {
	const dataPW, sentPW, shardPW = "data-S3cret", "sent-S3cret", "shard-S3cret"
	cfg, err := shard.ParseURL("redis-ring+sentinel://alice:" + dataPW + "@127.0.0.1:26379?shards=a,b&sentinel_username=bob&sentinel_password=" + sentPW)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sentinel.Shards) != 2 {
		t.Fatalf("Sentinel.Shards = %v, want 2", cfg.Sentinel.Shards)
	}
	cfg.Sentinel.Shards[1].Username, cfg.Sentinel.Shards[1].Password = "carol", shardPW
	values := map[string]any{
		"pool.Options":           cfg.Pool,
		"*pool.Options":          &cfg.Pool,
		"shard.SentinelOptions":  cfg.Sentinel,
		"*shard.SentinelOptions": &cfg.Sentinel,
		"shard.SentinelShard":    cfg.Sentinel.Shards[1],
		"[]shard.SentinelShard":  cfg.Sentinel.Shards,
		"sentinel.Options":       sentinel.Options{Username: "bob", Password: sentPW},
		"map of pool.Options":    map[string]pool.Options{"pool": cfg.Pool},
	}
	secrets := []string{dataPW, sentPW, shardPW}
	for name, v := range values {
		j, err := json.Marshal(v)
		if err != nil {
			t.Errorf("json.Marshal(%s): %v", name, err)
		}
		y, err := yaml.Marshal(v)
		if err != nil {
			t.Errorf("yaml.Marshal(%s): %v", name, err)
		}
		var logged bytes.Buffer
		slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "value", v)
		for _, out := range []struct{ how, text string }{{"json", string(j)}, {"yaml", string(y)}, {"slog", logged.String()}} {
			for _, s := range secrets {
				if strings.Contains(out.text, s) {
					t.Errorf("%s of %s shows a password: %s", out.how, name, out.text)
				}
			}
			if !strings.Contains(out.text, "***") {
				t.Errorf("%s of %s does not show that a password is set (***): %s", out.how, name, out.text)
			}
		}
	}

	// The other fields keep their encoding, and decoding is unchanged.
	j, err := json.Marshal(cfg.Pool)
	if err != nil {
		t.Fatal(err)
	}
	var back pool.Options
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if back.Username != "alice" || back.Password != "***" {
		t.Errorf("decoded %+v, want Username alice and Password ***", back)
	}
	if err := json.Unmarshal([]byte(`{"Username":"u","Password":"p","DB":3}`), &back); err != nil || back.Password != "p" || back.DB != 3 {
		t.Errorf("json.Unmarshal into pool.Options = %+v, %v; want the password and DB read", back, err)
	}
	var sy shard.SentinelOptions
	y, err := yaml.Marshal(cfg.Sentinel)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y, &sy); err != nil {
		t.Fatal(err)
	}
	if len(sy.Shards) != 2 || sy.Shards[1].Username != "carol" || sy.Username != "bob" || len(sy.Addrs) != 1 {
		t.Errorf("YAML round trip of SentinelOptions = %+v, want its shards, users and Sentinels", sy)
	}
	// Every field is encoded, under its own name: a field added to one
	// of the types and not to its encoding fails here.
	for _, v := range []any{pool.Options{}, shard.SentinelOptions{}, shard.SentinelShard{}, sentinel.Options{}} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]any
		if err := json.Unmarshal(j, &keys); err != nil {
			t.Fatal(err)
		}
		typ := reflect.TypeOf(v)
		if len(keys) != typ.NumField() {
			t.Errorf("json of %T has %d fields, the type %d: %s", v, len(keys), typ.NumField(), j)
		}
		for f := range typ.Fields() {
			if _, ok := keys[f.Name]; !ok {
				t.Errorf("json of %T lacks field %s: %s", v, f.Name, j)
			}
		}
	}

	// A TLS configuration with a client key encodes (it failed, on its
	// func fields) and shows what String shows of it, not the key.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := key.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	d := new(big.Int).SetBytes(raw).String() // how encoding/json writes a key's scalar
	tc := &tls.Config{ServerName: "redis.internal", Certificates: []tls.Certificate{{PrivateKey: key}}}
	withTLS := map[string]any{
		"pool.Options":          pool.Options{TLSConfig: tc},
		"shard.SentinelOptions": shard.SentinelOptions{TLSConfig: tc, Shards: []shard.SentinelShard{{Name: "a", TLSConfig: tc}}},
		"sentinel.Options":      sentinel.Options{TLSConfig: tc},
	}
	for name, v := range withTLS {
		j, err := json.Marshal(v)
		if err != nil {
			t.Errorf("json.Marshal(%s with TLS): %v", name, err)
		}
		y, err := yaml.Marshal(v)
		if err != nil {
			t.Errorf("yaml.Marshal(%s with TLS): %v", name, err)
		}
		for _, out := range []string{string(j), string(y)} {
			if strings.Contains(out, d) {
				t.Errorf("%s with TLS shows the private key: %s", name, out)
			}
			if !strings.Contains(out, "redis.internal") {
				t.Errorf("%s with TLS does not show its ServerName: %s", name, out)
			}
		}
	}

	// Unset passwords stay empty: nothing claims a password that is not set.
	j, err = json.Marshal(pool.Options{Username: ""})
	if err != nil || strings.Contains(string(j), "***") {
		t.Errorf("json of options without a password = %s, %v", j, err)
	}
}
