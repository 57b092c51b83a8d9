package shard

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/sentinel"
)

// TestReview13FmtVerbsHidePasswords prints a configuration and its parts
// with every fmt verb a program may use by mistake (%d for a count whose
// argument slipped, %t, %e...): String and GoString hide the passwords
// only for %v, %s, %q, %x and %#v, and for the other verbs fmt printed
// every field as it is, the passwords among them (%!d(string=SECRET)).
// %T names the type and %p a non-pointer is fmt's own business: %p
// prints the raw fields before any method of the value is consulted.
func TestReview13FmtVerbsHidePasswords(t *testing.T) {
	const poolPW, sentPW, shardPW, optPW = "pw-Pool-7f3a", "pw-Sent-91c2", "pw-Shard-44d0", "pw-Opt-0b6e"
	cfg := Config{
		Shards: []ring.Shard{{Name: "a", Weight: 1}},
		Sentinel: SentinelOptions{Addrs: []string{"127.0.0.1:26379"}, Password: sentPW,
			Shards: []SentinelShard{{Name: "a", Password: shardPW}}},
		Pool: pool.Options{Username: "app", Password: poolPW},
	}
	type appConfig struct {
		Name  string
		Redis Config
	}
	values := []struct {
		name string
		v    any
	}{
		{"Config", cfg},
		{"*Config", &cfg},
		{"[]Config", []Config{cfg}},
		{"struct holding a Config", appConfig{"app", cfg}},
		{"Migration", Migration{From: &cfg}},
		{"pool.Options", cfg.Pool},
		{"SentinelOptions", cfg.Sentinel},
		{"SentinelShard", cfg.Sentinel.Shards[0]},
		{"sentinel.Options", sentinel.Options{Username: "s", Password: optPW}},
	}
	secrets := []string{poolPW, sentPW, shardPW, optPW}
	for _, s := range secrets[:len(secrets):len(secrets)] {
		secrets = append(secrets, hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))))
	}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%t", "%b", "%o", "%O", "%c", "%U", "%e", "%E", "%f", "%g", "%G", "%10d", "%-8t"}
	for _, val := range values {
		for _, verb := range verbs {
			out := fmt.Sprintf(verb, val.v)
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("%s printed with %s shows a password: %s", val.name, verb, out)
					break
				}
			}
		}
	}
	// The verbs that printed the descriptions keep printing them.
	if got, want := fmt.Sprintf("%v", cfg), cfg.String(); got != want {
		t.Errorf("%%v of a Config = %s, want its String %s", got, want)
	}
	if got, want := fmt.Sprintf("%+v", cfg.Pool), cfg.Pool.String(); got != want {
		t.Errorf("%%+v of pool.Options = %s, want its String %s", got, want)
	}
	if got, want := fmt.Sprintf("%#v", cfg.Sentinel), cfg.Sentinel.GoString(); got != want {
		t.Errorf("%%#v of SentinelOptions = %s, want its GoString %s", got, want)
	}
	if got, want := fmt.Sprintf("%q", cfg.Sentinel.Shards[0]), fmt.Sprintf("%q", cfg.Sentinel.Shards[0].String()); got != want {
		t.Errorf("%%q of a SentinelShard = %s, want %s", got, want)
	}
	if got, want := fmt.Sprintf("[%-12.5s]", sentinel.Options{}), fmt.Sprintf("[%-12.5s]", sentinel.Options{}.String()); got != want {
		t.Errorf("width and precision: %s, want %s", got, want)
	}
}
