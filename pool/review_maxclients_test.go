package pool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// TestFullServerIsNotAnAuthFailure: a server at maxclients answers every new
// connection with "-ERR max number of clients reached" before it reads
// anything, and closes it. The dial's AUTH reads that reply; it says
// nothing about the credentials, which may well be right. Reported as an
// *AuthError (errors.Is(err, ErrAuth)) it makes shard give up at once
// instead of retrying a node that is only busy, and mark a healthy node as
// refusing its credentials.
func TestFullServerIsNotAnAuthFailure(t *testing.T) {
	const password = "full-but-right-pw"
	srv := startServer(t, redistest.Options{DefaultPassword: password, Args: []string{"--maxclients", "1"}})

	// Take the one connection the server allows. The harness's own
	// readiness connection may still be counted for a moment: retry until
	// this one is accepted and authenticated.
	var holder redis.Conn
	deadline := time.Now().Add(10 * time.Second)
	for holder == nil {
		c, err := redis.Dial("tcp", srv.Addr, redis.DialPassword(password),
			redis.DialConnectTimeout(2*time.Second), redis.DialReadTimeout(2*time.Second))
		if err == nil {
			if _, err = c.Do("PING"); err == nil {
				holder = c
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("could not take the server's only connection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer holder.Close()

	set := newTestSet(t, Options{Password: password})
	c, err := set.Get(context.Background(), srv.Addr)
	if err == nil {
		c.Close()
		t.Fatal("Get succeeded on a server at maxclients")
	}
	if !strings.Contains(err.Error(), "max number of clients") {
		t.Fatalf("Get = %v, want the server's maxclients reply", err)
	}
	if errors.Is(err, ErrAuth) {
		t.Errorf("Get = %v: a full server is reported as refusing the credentials (errors.Is(err, ErrAuth))", err)
	}
	var de *DialError
	if !errors.As(err, &de) || de.Addr != srv.Addr {
		t.Errorf("Get = %v (%T), want a *DialError for %s", err, err, srv.Addr)
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		t.Errorf("Get = %v: the server's reply should stay reachable as a redis.Error", err)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error %q contains the password", err)
	}

	// Once a connection is free the same Set logs in: the credentials were
	// right all along.
	holder.Close()
	deadline = time.Now().Add(10 * time.Second)
	for {
		c, err := set.Get(context.Background(), srv.Addr)
		if err == nil {
			_, err = c.Do("PING")
			c.Close()
			if err != nil {
				t.Fatalf("PING after login: %v", err)
			}
			break
		}
		if errors.Is(err, ErrAuth) {
			t.Fatalf("Get = %v, want no auth failure with the right password", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Get after the server had room: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
