package redistest

import (
	"bufio"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func dialTLS(addr string, cfg *tls.Config) (redis.Conn, error) {
	return redis.Dial("tcp", addr,
		redis.DialUseTLS(true), redis.DialTLSConfig(cfg),
		redis.DialConnectTimeout(2*time.Second), redis.DialReadTimeout(2*time.Second))
}

func TestTLS(t *testing.T) {
	t.Parallel()
	s := StartTB(t, Options{TLS: true})
	if s.TLS == nil {
		t.Fatal("Server.TLS is nil for a TLS server")
	}

	t.Run("PING over TLS", func(t *testing.T) {
		c, err := dialTLS(s.Addr, s.TLS.ClientConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got, err := redis.String(c.Do("PING")); err != nil || got != "PONG" {
			t.Fatalf("PING = %q, %v", got, err)
		}
	})
	t.Run("plaintext refused", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", s.Addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return // refused at write: fine
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil && strings.HasPrefix(line, "+PONG") {
			t.Fatalf("a plaintext PING was answered: %q", line)
		}
	})
	t.Run("unknown CA rejected", func(t *testing.T) {
		c, err := dialTLS(s.Addr, &tls.Config{ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
		if err == nil {
			c.Close()
			t.Fatal("a client that does not trust the throwaway CA connected")
		}
	})
	t.Run("certificate names 127.0.0.1 and localhost", func(t *testing.T) {
		for _, name := range []string{"127.0.0.1", "localhost"} {
			cfg := s.TLS.ClientConfig()
			cfg.ServerName = name
			c, err := dialTLS(s.Addr, cfg)
			if err != nil {
				t.Fatalf("server name %s: %v", name, err)
			}
			c.Close()
		}
	})
	t.Run("harness over TLS", func(t *testing.T) {
		if got, err := s.Do("PING"); err != nil || got != "PONG" {
			t.Fatalf("Do(PING) = %q, %v", got, err)
		}
		if out, err := s.CLI(t.Context(), "PING"); err != nil || out != "PONG" {
			t.Fatalf("CLI(PING) = %q, %v", out, err)
		}
	})
	t.Run("Restart keeps TLS", func(t *testing.T) {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
		c, err := dialTLS(s.Addr, s.TLS.ClientConfig())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
}

func TestTLSClientAuth(t *testing.T) {
	t.Parallel()
	servers := StartNTB(t, 2, Options{TLS: true, TLSClientAuth: true})
	// Servers started together share a CA, so one client configuration
	// works for all of them.
	cfg := servers[0].TLS.ClientConfig()
	for _, s := range servers {
		c, err := dialTLS(s.Addr, cfg)
		if err != nil {
			t.Fatalf("%s with the client certificate: %v", s.Addr, err)
		}
		if _, err := c.Do("PING"); err != nil {
			t.Fatalf("%s: PING: %v", s.Addr, err)
		}
		c.Close()
	}
	noCert := servers[1].TLS.ClientConfig()
	noCert.Certificates = nil
	c, err := dialTLS(servers[1].Addr, noCert)
	if err == nil {
		// TLS 1.3 reports a missing client certificate only at the first read.
		_, err = c.Do("PING")
		c.Close()
	}
	if err == nil {
		t.Fatal("a client without a certificate was served")
	}
}
