package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A password with @ : / % # ? & = + reaches the server unchanged from a
// percent-encoded URL and from a file, and shows in no error or print.
func TestReview4SpecialCharacterPasswordRoundTrips(t *testing.T) {
	const pw = "p@ss:w/rd%#?&=+"
	const encoded = "p%40ss%3Aw%2Frd%25%23%3F%26%3D%2B" // written out by hand
	srv := redistest.StartTB(t, redistest.Options{Users: []redistest.User{{Name: "app", Password: pw}}})
	fromURL, err := shard.ParseURL("redis-ring://app:" + encoded + "@" + srv.Addr + "?health_interval=-1ns")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := shard.ParseConfig([]byte("shards: [{addr: '" + srv.Addr + "'}]\npool: {username: app, password: '" + pw + "'}\nhealth: {interval: -1ns}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fromURL.Pool.Password != pw || fromFile.Pool.Password != pw {
		t.Fatalf("passwords differ from %q (URL: %d bytes, file: %d bytes)", pw, len(fromURL.Pool.Password), len(fromFile.Pool.Password))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, cfg := range map[string]shard.Config{"url": fromURL, "file": fromFile} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			if out := fmt.Sprintf(verb, cfg); strings.Contains(out, pw) {
				t.Errorf("%s config printed with %s shows the password", name, verb)
			}
		}
		c, err := shard.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		key := "review4:pw:" + name
		if _, err := c.Do(ctx, "SET", key, name); err != nil {
			c.Close()
			t.Fatalf("%s: %v", name, err)
		}
		got, err := redis.String(c.Do(ctx, "GET", key))
		c.Close()
		if err != nil || got != name {
			t.Fatalf("%s: GET = %q, %v", name, got, err)
		}
		if v, err := srv.Do("GET", key); err != nil || v != name {
			t.Fatalf("%s: the server holds %q, %v", name, v, err)
		}
	}
	// A wrong password with the same characters fails as an auth error
	// that does not show it.
	wrong := strings.Replace(encoded, "p", "q", 1)
	cfg, err := shard.ParseURL("redis-ring://app:" + wrong + "@" + srv.Addr + "?health_interval=-1ns")
	if err != nil {
		t.Fatal(err)
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Do(ctx, "GET", "x")
	if err == nil {
		t.Fatal("a wrong password was accepted")
	}
	if strings.Contains(err.Error(), "ss:w/rd%#?&=+") {
		t.Fatalf("auth error %q shows the password", err)
	}
	if errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("a refused password is not a config error: %v", err)
	}
}
