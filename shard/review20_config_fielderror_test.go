package shard_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A config file with a bad field gives an error that matches ErrBadConfig
// and holds a *FieldError naming that field by its path in the file, at
// whatever depth, through LoadConfig's file name too; an error of a
// file's own (a missing CA file) keeps its cause.
func TestReview20ConfigFieldErrorNamesField(t *testing.T) {
	one := "shards: [{addr: '127.0.0.1:6379'}]\n"
	tests := []struct {
		name, doc, field string
	}{
		{"int", one + "pool: {max_idle: many}\n", "pool.max_idle"},
		{"duration", one + "pool: {read_timeout: 5}\n", "pool.read_timeout"},
		{"never duration", one + "pool: {idle_timeout: forever}\n", "pool.idle_timeout"},
		{"bool", one + "pool: {wait: 'true'}\n", "pool.wait"},
		{"fraction", "shards: [{addr: '127.0.0.1:6379'}, {addr: '127.0.0.1:6380', weight: 1.5}]\n", "shards[1].weight"},
		{"unknown field", one + "health: {failurelimit: 3}\n", "health.failurelimit"},
		{"unknown top field", one + "passwrd: x\n", "passwrd"},
		{"shape", "shards: ['127.0.0.1:6379']\n", "shards[0]"},
		{"tagged", one + "pool: {password: !!int abc}\n", "pool.password"},
		{"sentinel shard", "shards: [{name: a, sentinel: {master: m, addrs: ['127.0.0.1:26379'], timeout: x}}]\n", "shards[0].sentinel.timeout"},
		{"migration addrs", one + "migration: {from: 'redis-ring://127.0.0.1:6390', addrs: {'127.0.0.1:6390': [x]}}\n", `migration.addrs["127.0.0.1:6390"]`},
		{"password_env", one + "pool: {password_env: SHARDIS_REVIEW20_NEVER_SET}\n", "pool.password_env"},
		{"both passwords", one + "pool: {password: x, password_env: X}\n", "pool.password_env"},
		{"sentinel both passwords", "shards: [{name: a}]\nsentinel: {addrs: ['127.0.0.1:26379'], password: x, password_env: X}\n", "sentinel.password_env"},
		{"key_file PEM", one + "pool: {tls: {cert_file: a, key_file: \"-----BEGIN PRIVATE KEY-----\\nx\\n\"}}\n", "pool.tls.key_file"},
		{"ca_file missing", one + "pool: {tls: {ca_file: /nonexistent/shardis-ca.pem}}\n", "pool.tls.ca_file"},
		{"read_from", one + "cluster: {read_from: replicas}\n", "cluster.read_from"},
		{"url", "url: 'redis-ring://127.0.0.1:6379?db=x'\n", "url"},
		{"migration.from", one + "migration: {from: 'redis-ring://127.0.0.1:0'}\n", "migration.from"},
		{"migration.from_file URL", one + "migration: {from_file: 'redis-ring://127.0.0.1:6390'}\n", "migration.from_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "shardis.yaml")
			if err := os.WriteFile(path, []byte(tt.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, perr := shard.ParseConfig([]byte(tt.doc))
			_, lerr := shard.LoadConfig(path)
			for what, err := range map[string]error{"ParseConfig": perr, "LoadConfig": lerr} {
				if err == nil {
					t.Fatalf("%s: accepted", what)
				}
				if !errors.Is(err, shard.ErrBadConfig) {
					t.Errorf("%s: %v does not match ErrBadConfig", what, err)
				}
				var fe *shard.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("%s: %v holds no *FieldError", what, err)
				}
				if fe.Field != tt.field {
					t.Errorf("%s: FieldError.Field = %q, want %q (error %v)", what, fe.Field, tt.field, err)
				}
				if !strings.Contains(err.Error(), fe.Error()) || strings.HasPrefix(fe.Error(), "shardis:") {
					t.Errorf("%s: FieldError text %q is not the message of %q without its prefix", what, fe, err)
				}
			}
			if tt.name == "ca_file missing" && !errors.Is(perr, fs.ErrNotExist) {
				t.Errorf("the missing CA file's cause is lost: %v", perr)
			}
		})
	}
}
