package pool

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/shardis/shardis/internal/addrkey"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
)

// dialer makes ready-to-use connections to one address.
type dialer struct {
	addr     string
	opts     Options     // with defaults applied
	tls      *tls.Config // private copy with ServerName filled in, or nil
	readOnly bool        // send READONLY after the other setup commands
	// resolve, when set, names the address to dial each time: addr is
	// then a name (see Set.SetResolver), not an address.
	resolve func() (string, error)
	// names gives the connection name to dial with (names.go); pooled
	// makes the connection follow its later changes.
	names  *names
	pooled bool
}

func newDialer(addr string, opts Options, readOnly bool, resolve func() (string, error)) *dialer {
	d := &dialer{addr: addr, opts: opts, readOnly: readOnly || opts.ReadOnly, resolve: resolve}
	if opts.TLSConfig != nil && resolve == nil {
		d.tls = opts.TLSConfig.Clone()
		if d.tls.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr) // addr was checked by checkAddr
			d.tls.ServerName = host
		}
	}
	return d
}

// dial connects, does the TLS handshake when configured and sends the setup
// commands. The whole dial is bounded by DialTimeout and by ctx. Failures are
// *DialError, or *AuthError when the server refused AUTH.
func (d *dialer) dial(ctx context.Context) (redis.Conn, error) {
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, d.opts.DialTimeout)
	defer cancel()

	addr, tlsConf, err := d.target()
	if err != nil {
		return nil, err
	}
	netDialer := &net.Dialer{Timeout: d.opts.DialTimeout}
	nc, err := netDialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &DialError{Addr: addr, Err: connectCause(caller, err)}
	}
	if tlsConf != nil {
		// The handshake runs under ctx, so a cancelled Get stops a stuck
		// handshake too.
		tc := tls.Client(nc, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			switch {
			case closedBeforeReply(err):
				err = fmt.Errorf("%w: %w", errHandshakeClosed, err)
			case errors.Is(err, context.DeadlineExceeded):
				// A plain-text server reads the ClientHello as the start
				// of an inline command and waits for the rest: say where
				// the dial stopped.
				err = fmt.Errorf("TLS handshake: no answer (a server without TLS on this port answers none): %w", err)
			}
			return nil, &DialError{Addr: addr, Err: err}
		}
		nc = tc
	}
	cc := &coarseConn{Conn: nc}
	lc := newLiveConn(cc, d.opts.ReadTimeout)
	name := &clientName{name: d.opts.ClientName}
	if d.names != nil {
		name = d.names.cur.Load()
	}
	if d.pooled {
		lc.names, lc.named = d.names, name.gen
	}
	lc.unverified = addr // checked by the first reply, the setup's or the caller's
	lc.dialed.Addr = addr
	// The setup commands run under ctx; then the connection arms its own
	// deadlines (see coarseConn).
	if err := d.setup(ctx, lc, addr, name.name); err != nil {
		lc.Close()
		return nil, err
	}
	// A context that ended just as the last setup reply came in leaves
	// that reply read and its callback (liveConn.watch) closing the
	// socket all the same, perhaps after this point: the connection
	// would be handed out dead. Such a callback only starts once ctx's
	// Err is set, and the setup's last watch has been stopped, so a
	// context still live here can no longer touch the connection.
	if err := ended(ctx); err != nil {
		lc.Close()
		return nil, &DialError{Addr: addr, Err: err}
	}
	lc.changed.Store(false) // what the setup set (name, database, READONLY) is the fresh state
	cc.writeTimeout = d.opts.WriteTimeout
	return lc, nil
}

// setup sends AUTH, CLIENT SETNAME (with name, when not empty), SELECT
// and READONLY as configured, in that order (AUTH first: the others need
// an authenticated connection); after READONLY it checks that a replica
// has synced (replicaSynced).
func (d *dialer) setup(ctx context.Context, c redis.Conn, addr, name string) error {
	o := d.opts
	if o.Password != "" {
		args := []any{o.Password}
		if o.Username != "" {
			args = []any{o.Username, o.Password}
		}
		if _, err := redis.DoContext(c, ctx, "AUTH", args...); err != nil {
			var de *DialError
			if errors.As(err, &de) {
				return de // a full server's refusal (liveConn.next)
			}
			var reply redis.Error
			if errors.As(err, &reply) && !refusedConnection(reply) {
				return newAuthError(addr, o.Username, o.Password, reply)
			}
			// A network or context failure (the reply never came), or
			// a full server's refusal, sent before the AUTH was read:
			// nothing in err can hold the password.
			return &DialError{Addr: addr, Err: errtext.Errorf("AUTH: %w", err)}
		}
	}
	steps := []struct {
		on   bool
		name string
		args []any
	}{
		{name != "", "CLIENT", []any{"SETNAME", name}},
		{o.DB != 0, "SELECT", []any{o.DB}},
		{d.readOnly, "READONLY", nil},
	}
	for _, s := range steps {
		if !s.on {
			continue
		}
		if _, err := redis.DoContext(c, ctx, s.name, s.args...); err != nil {
			var de *DialError
			if errors.As(err, &de) {
				return de // a full server's refusal (liveConn.next)
			}
			// A server that wants credentials the options lack refuses
			// the first command after the dial with NOAUTH: that is a
			// refusal of the credentials, whichever step met it.
			var reply redis.Error
			if errors.As(err, &reply) && strings.HasPrefix(string(reply), "NOAUTH ") {
				return newAuthError(addr, o.Username, o.Password, reply)
			}
			return &DialError{Addr: addr, Err: errtext.Errorf("%s: %w", s.name, err)}
		}
	}
	if d.readOnly {
		if err := replicaSynced(ctx, c); err != nil {
			var de *DialError
			if errors.As(err, &de) {
				return de
			}
			return &DialError{Addr: addr, Err: err}
		}
	}
	return nil
}

// errHandshakeClosed is wrapped, next to the network's own error, by the
// dial error of a TLS connection that the server closed or reset during
// the handshake, without a TLS alert. A redis-server at maxclients does
// so to every new TLS connection: it has done no handshake, so it cannot
// send the refusal that a plain-text client reads.
var errHandshakeClosed = errors.New("shardis: the server closed the connection during the TLS handshake, as a redis-server at maxclients (no room for another client) does")

// errReplicaNotSynced is the cause of the *DialError of a read-only
// connection to a replica that holds no data of its master yet.
var errReplicaNotSynced = errors.New("replica has not synced with its master yet (replication offset 0): it would answer reads from an empty dataset")

// replicaSynced checks, on a connection dialed for replica reads, that
// the server is not a replica that has never synced with its master: one
// restarted without its data, or just attached, serves reads from an
// empty dataset (replica-serve-stale-data yes, the default) until its
// first full sync is loaded, and a read sent there answers nil for a key
// the master holds. Such a replica reports replication offset 0, the
// rule Redis Cluster itself uses to leave a replica out of CLUSTER SLOTS
// (and to show it as loading in CLUSTER SHARDS). A replica that had
// synced and lost its link keeps its offset and its data, and stays
// usable. A server that refuses INFO (an ACL without it, a renamed
// command) cannot tell, and its connection is taken.
func replicaSynced(ctx context.Context, c redis.Conn) error {
	info, err := redis.String(redis.DoContext(c, ctx, "INFO", "replication"))
	if err != nil {
		var reply redis.Error
		if errors.As(err, &reply) {
			return nil
		}
		return errtext.Errorf("INFO replication: %w", err)
	}
	role, offset := "", ""
	for line := range strings.Lines(info) {
		line = strings.TrimRight(line, "\r\n")
		if v, ok := strings.CutPrefix(line, "role:"); ok {
			role = v
		} else if v, ok := strings.CutPrefix(line, "slave_repl_offset:"); ok {
			offset = v
		}
	}
	if role == "slave" && offset == "0" {
		return errReplicaNotSynced
	}
	return nil
}

// refusedConnection reports whether reply is the error a server sends to
// every new connection it has no room for (maxclients), before it reads
// anything, and then closes the connection. The dial's first command reads
// it, but it says nothing about that command: sent by AUTH it is no
// refusal of the credentials, and the node is only full, not down.
func refusedConnection(reply redis.Error) bool {
	return strings.HasPrefix(string(reply), "ERR max number of clients")
}

// errPeerClosed rejects a pooled connection that the server has closed.
var errPeerClosed = errors.New("shardis: connection closed by the server")

// ping is the pool's TestOnBorrowContext. Every connection is first checked,
// without a round trip, for having been closed by the server or left in a
// changed state by its last user (connstate.go); one idle for
// longer than the TestOnBorrow option must also answer PING before it is
// handed out. Under a context that has ended there is no PING: it would
// fail without being sent, and the pool, which tests every idle
// connection in turn with that context, would close each of them for it
// (Set.get gives the connection back instead).
func (d *dialer) ping(ctx context.Context, c redis.Conn, lastUsed time.Time) error {
	if lc, ok := c.(*liveConn); ok {
		if lc.closedByPeer() {
			return errPeerClosed
		}
		if lc.leftState() {
			return errStateChanged
		}
		// Given back whole, it is no longer subscribed (liveConn.next).
		lc.subscribed.Store(false)
		lc.drained.Store(false)
	}
	if d.opts.TestOnBorrow == Never || time.Since(lastUsed) < d.opts.TestOnBorrow || ended(ctx) != nil {
		return nil
	}
	_, err := redis.DoContext(c, ctx, "PING")
	return err
}

// connectCause makes a connect that failed as the caller's context ended
// match that context's error. The runtime arms the socket's deadline from
// the context's and may meet it before the context's own timer fires: the
// connect then fails with a bare "i/o timeout" (os.ErrDeadlineExceeded),
// which reads like a slow node and matches no context error.
func connectCause(caller context.Context, err error) error {
	cerr := ended(caller)
	if cerr == nil || errors.Is(err, cerr) {
		return err
	}
	return fmt.Errorf("%w (%w)", cerr, err)
}

// ended returns ctx's error, or context.DeadlineExceeded when its
// deadline has passed before its timer fired; nil while ctx is live.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// checkAddr accepts host:port with a non-empty host and a port in 1..65535.
// An address with credentials pasted into it (a URL's userinfo) is refused
// without quoting them.
func checkAddr(addr string) error {
	if addrkey.HasCredentials(addr) {
		return fmt.Errorf("%w %q: credentials do not belong in an address (set Options.Username and Password)", ErrBadAddr, addrkey.Redact(addr))
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		why := err.Error()
		if ae, ok := err.(*net.AddrError); ok {
			why = ae.Err // without the address, quoted once already
		}
		return fmt.Errorf("%w %q: %s", ErrBadAddr, addr, why)
	}
	if host == "" {
		return fmt.Errorf("%w %q: empty host", ErrBadAddr, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w %q: port must be a number in 1..65535", ErrBadAddr, addr)
	}
	return nil
}
