package redistest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sentinelBin is the Sentinel binary (Debian's redis-sentinel package).
const sentinelBin = "redis-sentinel"

// Defaults of SentinelOptions.
const (
	// DefaultDownAfter is the down-after-milliseconds used when
	// SentinelOptions.DownAfter is zero: with it a killed master is
	// replaced in about 2-3 s on loopback.
	DefaultDownAfter = 1000 * time.Millisecond
	// DefaultFailoverTimeout is the failover-timeout used when
	// SentinelOptions.FailoverTimeout is zero.
	DefaultFailoverTimeout = 3000 * time.Millisecond
	sentinelReadyTimeout   = 30 * time.Second
)

// SentinelOptions configures StartSentinels.
type SentinelOptions struct {
	// Data configures the data nodes (masters and replicas): ACL users,
	// passwords, TLS. Cluster must be off. The Sentinels log in to the
	// data nodes with the harness account (see Options). With TLS the
	// Sentinels use TLS too (tls-port only, tls-replication yes), with
	// certificates from the same throwaway CA.
	Data Options
	// Shards is the number of master sets (default 3); each is named
	// "master-<i>".
	Shards int
	// Replicas is the number of replicas per master (default 1).
	Replicas int
	// Sentinels is the number of Sentinels (default 3); the quorum is a
	// majority of them.
	Sentinels int
	// DownAfter is every master's down-after-milliseconds (default
	// DefaultDownAfter).
	DownAfter time.Duration
	// FailoverTimeout is every master's failover-timeout (default
	// DefaultFailoverTimeout).
	FailoverTimeout time.Duration
	// SentinelPassword, when set, is the Sentinels' own password,
	// separate from the data nodes' credentials: requirepass, or with
	// SentinelUser the password of that ACL user.
	SentinelPassword string
	// SentinelUser, when set (with SentinelPassword), is the only ACL user
	// that can log in to the Sentinels (the default user is off); the
	// Sentinels also use it with each other.
	SentinelUser string
}

func (o SentinelOptions) withDefaults() SentinelOptions {
	if o.Shards == 0 {
		o.Shards = 3
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Sentinels == 0 {
		o.Sentinels = 3
	}
	if o.DownAfter == 0 {
		o.DownAfter = DefaultDownAfter
	}
	if o.FailoverTimeout == 0 {
		o.FailoverTimeout = DefaultFailoverTimeout
	}
	return o
}

func (o SentinelOptions) validate() error {
	switch {
	case o.Data.Cluster:
		return fmt.Errorf("%w: Sentinel data nodes cannot be cluster nodes", ErrInvalid)
	case o.Shards < 1 || o.Replicas < 0 || o.Sentinels < 1:
		return fmt.Errorf("%w: %d shards, %d replicas, %d sentinels", ErrInvalid, o.Shards, o.Replicas, o.Sentinels)
	case o.Shards*(1+o.Replicas)+o.Sentinels > maxServers:
		return fmt.Errorf("%w: more than %d processes", ErrInvalid, maxServers)
	case o.DownAfter < time.Millisecond || o.FailoverTimeout < time.Millisecond:
		return fmt.Errorf("%w: DownAfter and FailoverTimeout must be at least 1ms", ErrInvalid)
	case strings.ContainsAny(o.SentinelPassword, "\x00\r\n"):
		return fmt.Errorf("%w: SentinelPassword contains a NUL or line break", ErrInvalid)
	case o.SentinelUser != "" && (o.SentinelPassword == "" || strings.ContainsFunc(o.SentinelUser, func(r rune) bool { return r <= ' ' || r == 0x7f })):
		return fmt.Errorf("%w: SentinelUser needs a SentinelPassword and may not contain spaces", ErrInvalid)
	}
	return o.Data.validate()
}

// SentinelShard is one master set: the servers that were its master and
// replicas when it started. Which of them is the master now can change
// (failover); ask SentinelSet.Master.
type SentinelShard struct {
	// Name is the Sentinel master name, "master-<i>".
	Name string
	// Nodes are the set's servers; Nodes[0] was the first master.
	Nodes []*Server
}

// SentinelSet is a group of Sentinel-monitored master sets on loopback,
// started by StartSentinels.
type SentinelSet struct {
	// Shards are the master sets, in order.
	Shards []*SentinelShard
	// Sentinels are the redis-sentinel processes. They are *Server values:
	// Kill, Restart, Stop, PID and Log work on them as on data nodes.
	Sentinels []*Server

	opts SentinelOptions
}

// StartSentinels starts o.Shards masters with o.Replicas replicas each and
// o.Sentinels Sentinels monitoring every master (quorum: a majority), and
// waits until every Sentinel sees every master, its replicas and the
// other Sentinels. Sentinel configuration files are written to each
// Sentinel's own temporary directory. On a 2-core machine 3 × (1+1) + 3 is
// ready in a few seconds.
func StartSentinels(o SentinelOptions) (*SentinelSet, error) {
	return StartSentinelsContext(context.Background(), o)
}

// StartSentinelsContext is StartSentinels with a context that can cut the
// waits short.
func StartSentinelsContext(ctx context.Context, o SentinelOptions) (*SentinelSet, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := Available(); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath(sentinelBin); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, sentinelBin, err)
	}
	if o.Data.TLS && o.Data.authority == nil {
		a, err := newAuthority()
		if err != nil {
			return nil, err
		}
		o.Data.authority = a
	}
	set := &SentinelSet{opts: o}
	// The masters, then their replicas, each set in parallel.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	masters := make([]*Server, o.Shards)
	for i := range masters {
		wg.Go(func() {
			m, err := startCustom(ctx, o.Data, "", func(s *Server) func(int) string {
				return dataConf(o.Data, s, "")
			})
			mu.Lock()
			defer mu.Unlock()
			masters[i] = m
			errs = append(errs, err)
		})
	}
	wg.Wait()
	for i, m := range masters {
		if m != nil {
			set.Shards = append(set.Shards, &SentinelShard{Name: "master-" + strconv.Itoa(i), Nodes: []*Server{m}})
		}
	}
	if err := errors.Join(errs...); err != nil {
		set.Stop()
		return nil, err
	}
	for _, sh := range set.Shards {
		for range o.Replicas {
			master := sh.Nodes[0]
			wg.Go(func() {
				r, err := startCustom(ctx, o.Data, "", func(s *Server) func(int) string {
					return dataConf(o.Data, s, master.Addr)
				})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				sh.Nodes = append(sh.Nodes, r)
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		set.Stop()
		return nil, err
	}
	sopts := Options{DefaultPassword: o.SentinelPassword}
	if o.SentinelUser != "" {
		sopts = Options{Users: []User{{Name: o.SentinelUser, Password: o.SentinelPassword}}}
	}
	sopts.TLS, sopts.TLSClientAuth, sopts.authority = o.Data.TLS, o.Data.TLSClientAuth, o.Data.authority
	for range o.Sentinels {
		wg.Go(func() {
			s, err := startCustom(ctx, sopts, sentinelBin, func(s *Server) func(int) string {
				return func(port int) string { return set.sentinelConf(s, port) }
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			set.Sentinels = append(set.Sentinels, s)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		set.Stop()
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, sentinelReadyTimeout)
	defer cancel()
	if err := set.WaitReady(wctx); err != nil {
		set.Stop()
		return nil, fmt.Errorf("shardis: Sentinels did not converge: %w", err)
	}
	return set, nil
}

// startCustom starts a server whose configuration conf(s) writes, with
// bin instead of redis-server when bin is set.
func startCustom(ctx context.Context, opts Options, bin string, conf func(s *Server) func(int) string) (*Server, error) {
	dir, err := os.MkdirTemp("", "shardis-redis-*")
	if err != nil {
		return nil, fmt.Errorf("shardis: create server directory: %w", err)
	}
	s := &Server{Dir: dir, opts: opts, bin: bin}
	s.conf = conf(s)
	if err := s.start(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// dataConf returns the configuration of a data node: the usual one, the
// credentials a replica logs in to its master with (any node may become a
// replica), and replicaof when master is set.
func dataConf(o Options, s *Server, master string) func(int) string {
	return func(port int) string {
		text := configText(o, port, s.Dir, s.TLS)
		if user, pass, ok := o.credentials(); ok {
			if user != "" {
				text += "masteruser " + quote(user) + "\n"
			}
			text += "masterauth " + quote(pass) + "\n"
		}
		if master != "" {
			host, port, _ := strings.Cut(master, ":")
			text += "replicaof " + host + " " + port + "\n"
		}
		return text
	}
}

// sentinelConf is a Sentinel's configuration: every master, quorum a
// majority, the short timeouts, and the data nodes' credentials.
func (set *SentinelSet) sentinelConf(s *Server, port int) string {
	o := set.opts
	var b strings.Builder
	line := func(words ...string) {
		b.WriteString(strings.Join(words, " "))
		b.WriteByte('\n')
	}
	if f := s.TLS; f != nil {
		line("port", "0")
		line("tls-port", strconv.Itoa(port))
		line("tls-cert-file", quote(f.CertFile))
		line("tls-key-file", quote(f.KeyFile))
		line("tls-ca-cert-file", quote(f.CAFile))
		line("tls-client-cert-file", quote(f.ClientCertFile))
		line("tls-client-key-file", quote(f.ClientKeyFile))
		line("tls-replication", "yes") // TLS to the data nodes and the other Sentinels
		if o.Data.TLSClientAuth {
			line("tls-auth-clients", "yes")
		} else {
			line("tls-auth-clients", "no")
		}
	} else {
		line("port", strconv.Itoa(port))
	}
	line("bind", "127.0.0.1")
	line("daemonize", "no")
	line("dir", quote(s.Dir))
	line("logfile", quote(filepath.Join(s.Dir, logName)))
	switch {
	case o.SentinelUser != "":
		sum := sha256.Sum256([]byte(o.SentinelPassword))
		line("user", "default", "off")
		line("user", quote(o.SentinelUser), "reset", "on", "#"+hex.EncodeToString(sum[:]), quote("~*"), quote("&*"), quote("+@all"))
		line("sentinel", "sentinel-user", quote(o.SentinelUser))
		line("sentinel", "sentinel-pass", quote(o.SentinelPassword))
	case o.SentinelPassword != "":
		line("requirepass", quote(o.SentinelPassword))
	}
	quorum := strconv.Itoa(o.Sentinels/2 + 1)
	user, pass, auth := o.Data.credentials()
	for _, sh := range set.Shards {
		m := sh.Nodes[0]
		line("sentinel", "monitor", sh.Name, "127.0.0.1", strconv.Itoa(m.Port), quorum)
		line("sentinel", "down-after-milliseconds", sh.Name, strconv.FormatInt(o.DownAfter.Milliseconds(), 10))
		line("sentinel", "failover-timeout", sh.Name, strconv.FormatInt(o.FailoverTimeout.Milliseconds(), 10))
		line("sentinel", "parallel-syncs", sh.Name, "1")
		if auth {
			if user != "" {
				line("sentinel", "auth-user", sh.Name, quote(user))
			}
			line("sentinel", "auth-pass", sh.Name, quote(pass))
		}
	}
	return b.String()
}

// Addrs returns the Sentinels' addresses.
func (set *SentinelSet) Addrs() []string {
	out := make([]string, len(set.Sentinels))
	for i, s := range set.Sentinels {
		out[i] = s.Addr
	}
	return out
}

// Names returns the master names, in shard order.
func (set *SentinelSet) Names() []string {
	out := make([]string, len(set.Shards))
	for i, sh := range set.Shards {
		out[i] = sh.Name
	}
	return out
}

// Master returns the server of shard i that says (ROLE) it is a master,
// or an error when none or several do.
func (set *SentinelSet) Master(i int) (*Server, error) {
	var found []*Server
	for _, s := range set.Shards[i].Nodes {
		if !s.running() {
			continue
		}
		if role, err := s.Do("ROLE"); err == nil && strings.HasPrefix(role, "master") {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("shardis: shard %s has %d masters", set.Shards[i].Name, len(found))
	}
	return found[0], nil
}

// Replica returns a running server of shard i other than its master.
func (set *SentinelSet) Replica(i int) (*Server, error) {
	m, err := set.Master(i)
	if err != nil {
		return nil, err
	}
	for _, s := range set.Shards[i].Nodes {
		if s != m && s.running() {
			return s, nil
		}
	}
	return nil, fmt.Errorf("shardis: shard %s has no running replica", set.Shards[i].Name)
}

// WaitReady polls until every running Sentinel names the master of every
// shard, counts its replicas and knows the other running Sentinels.
func (set *SentinelSet) WaitReady(ctx context.Context) error {
	var last error
	for {
		if last = set.ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w (last: %v)", ErrTimeout, ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

func (set *SentinelSet) ready(ctx context.Context) error {
	running := 0
	for _, s := range set.Sentinels {
		if s.running() {
			running++
		}
	}
	for _, s := range set.Sentinels {
		if !s.running() {
			continue
		}
		for _, sh := range set.Shards {
			info, err := s.DoContext(ctx, "SENTINEL", "MASTER", sh.Name)
			if err != nil {
				return fmt.Errorf("sentinel %s: %w", s.Addr, err)
			}
			fields := strings.Split(info, "\n")
			get := func(k string) string {
				for i := 0; i+1 < len(fields); i++ {
					if strings.TrimSpace(fields[i]) == k {
						return strings.TrimSpace(fields[i+1])
					}
				}
				return ""
			}
			if n, _ := strconv.Atoi(get("num-slaves")); n < set.opts.Replicas {
				return fmt.Errorf("sentinel %s sees %d replicas of %s", s.Addr, n, sh.Name)
			}
			if n, _ := strconv.Atoi(get("num-other-sentinels")); n < running-1 {
				return fmt.Errorf("sentinel %s sees %d other sentinels for %s", s.Addr, n, sh.Name)
			}
			if flags := get("flags"); flags != "master" {
				return fmt.Errorf("sentinel %s: %s flags %q", s.Addr, sh.Name, flags)
			}
		}
	}
	return nil
}

// Stop stops every Sentinel and data node.
func (set *SentinelSet) Stop() error {
	servers := append([]*Server(nil), set.Sentinels...)
	for _, sh := range set.Shards {
		servers = append(servers, sh.Nodes...)
	}
	return stopAll(servers)
}

// StartSentinelsTB is StartSentinels for tests; see StartTB. It also fails
// (under CI) or skips the test when redis-sentinel is missing.
func StartSentinelsTB(tb testing.TB, o SentinelOptions) *SentinelSet {
	tb.Helper()
	Require(tb)
	set, err := StartSentinels(o)
	if err != nil {
		tb.Fatalf("start Sentinels: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			for _, s := range set.Sentinels {
				logTail(tb, s)
			}
			for _, sh := range set.Shards {
				for _, s := range sh.Nodes {
					logTail(tb, s)
				}
			}
		}
		if err := set.Stop(); err != nil {
			tb.Errorf("stop Sentinels: %v", err)
		}
	})
	return set
}
