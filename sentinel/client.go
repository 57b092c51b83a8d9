package sentinel

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
)

// Defaults for Options fields left at zero.
const (
	DefaultDialTimeout = time.Second
	DefaultReadTimeout = time.Second
)

// minTimeout is the shortest positive DialTimeout and ReadTimeout.
const minTimeout = time.Millisecond

// Options configures the connections to the Sentinels. They are separate
// from the data nodes' settings: Sentinels often have credentials (or no
// credentials) of their own.
type Options struct {
	// Username is the ACL user sent with AUTH; it needs a Password.
	Username string
	// Password, when set, is sent as AUTH while connecting. It never
	// appears in String, in JSON or YAML encodings of Options, or in any
	// error.
	Password string
	// TLSConfig, when not nil, makes the connections use TLS. An empty
	// ServerName is filled in with each Sentinel's host.
	TLSConfig *tls.Config
	// DialTimeout bounds connecting to one Sentinel (TCP, TLS, AUTH).
	// 0 means DefaultDialTimeout; New refuses a positive timeout below
	// 1ms.
	DialTimeout time.Duration
	// ReadTimeout bounds each reply of one Sentinel. 0 means
	// DefaultReadTimeout; New refuses a positive timeout below 1ms.
	ReadTimeout time.Duration
}

// String describes o without the password.
func (o Options) String() string {
	pw := `""`
	if o.Password != "" {
		pw = "***"
	}
	return fmt.Sprintf("sentinel.Options{Username: %q, Password: %s, TLS: %t, DialTimeout: %v, ReadTimeout: %v}",
		o.Username, pw, o.TLSConfig != nil, o.DialTimeout, o.ReadTimeout)
}

// GoString is String, so that %#v, which would print every field as it
// is, does not show the password.
func (o Options) GoString() string { return o.String() }

// Format prints o as String describes it, whatever the verb: fmt consults
// String only for %v, %s, %q, %x and %X (GoString for %#v), and with any
// other verb (a %d whose argument slipped) it would print every field as
// it is, the password among them.
func (o Options) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, o.GoString())
		return
	}
	_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), o.String())
}

// MarshalJSON encodes o as encoding/json encodes a struct, field by
// field, except that a set Password is "***" and TLSConfig (when set)
// only its ServerName and InsecureSkipVerify, so that a structured log
// of the options never shows a secret. Decoding is unchanged.
func (o Options) MarshalJSON() ([]byte, error) { return json.Marshal(o.fields()) }

// MarshalYAML is MarshalJSON for the YAML encoders (go.yaml.in/yaml/v3,
// gopkg.in/yaml.v2 and v3).
func (o Options) MarshalYAML() (any, error) { return o.fields(), nil }

// optionFields is what the encoders see of Options: the same fields in
// the same order, a set Password as "***", a TLSConfig as tlsFields.
type optionFields struct {
	Username    string
	Password    string
	TLSConfig   *tlsFields
	DialTimeout time.Duration
	ReadTimeout time.Duration
}

// tlsFields is what the encoders see of a tls.Config: never a
// certificate or a key.
type tlsFields struct {
	ServerName         string
	InsecureSkipVerify bool
}

func (o Options) fields() optionFields {
	f := optionFields{Username: o.Username, DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout}
	if o.Password != "" {
		f.Password = "***"
	}
	if c := o.TLSConfig; c != nil {
		f.TLSConfig = &tlsFields{ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
	}
	return f
}

func (o Options) withDefaults() Options {
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	return o
}

// Client asks the Sentinels of one monitored master set. It is safe for
// concurrent use. A Client holds no connection between calls: each query
// dials the Sentinel it asks.
type Client struct {
	master string
	opts   Options

	// listed is the Sentinels in the order given to New. It breaks the
	// ties of VerifiedMasterAddr, so that the same answers name the same
	// master whichever Sentinel answered before.
	listed []string

	mu    sync.Mutex
	addrs []string // the Sentinel that answered last comes first
}

// New returns a Client for the master set named master, monitored by the
// Sentinels at addrs ("host:port").
func New(master string, addrs []string, opts Options) (*Client, error) {
	if master == "" || strings.ContainsAny(master, " \t\r\n\x00") {
		return nil, fmt.Errorf("%w: master name %q must be one word", ErrBadOptions, master)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no Sentinel address for master %q", ErrBadOptions, master)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if err := CheckAddr(a); err != nil {
			return nil, err
		}
		if seen[a] {
			return nil, fmt.Errorf("%w: Sentinel %s listed twice", ErrBadOptions, a)
		}
		seen[a] = true
	}
	if opts.Username != "" && opts.Password == "" {
		user := strconv.Quote(opts.Username)
		if strings.Contains(opts.Username, ":") {
			// user:password given whole as the user name.
			user = "(not quoted: it holds a ':', as user:password given whole does)"
		}
		return nil, fmt.Errorf("%w: Sentinel username %s without a password", ErrBadOptions, user)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"DialTimeout", opts.DialTimeout}, {"ReadTimeout", opts.ReadTimeout}} {
		if d.v < 0 {
			return nil, fmt.Errorf("%w: %s is %v, must not be negative", ErrBadOptions, d.name, d.v)
		}
		// A few nanoseconds is a unit left out: every query would time out.
		if d.v > 0 && d.v < minTimeout {
			return nil, fmt.Errorf("%w: %s is %v, below %v: is a unit missing (time.Second, time.Millisecond)?", ErrBadOptions, d.name, d.v, minTimeout)
		}
	}
	return &Client{master: master, opts: opts.withDefaults(), listed: slices.Clone(addrs), addrs: slices.Clone(addrs)}, nil
}

// CheckAddr reports whether addr is a usable "host:port". An address
// with credentials pasted into it ("user:password@host:port", the
// userinfo of a redis:// URL) is refused: the credentials go in Options.
// The error quotes addr with what comes before its '@' hidden.
func CheckAddr(addr string) error {
	if addrkey.HasCredentials(addr) {
		return fmt.Errorf("%w: Sentinel address %q: an address holds no credentials (set Options.Username and Options.Password)", ErrBadOptions, addrkey.Redact(addr))
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return fmt.Errorf("%w: Sentinel address %q: want host:port", ErrBadOptions, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: Sentinel address %q: bad port", ErrBadOptions, addr)
	}
	return nil
}

// String describes c without the password: the master name, the
// Sentinels (the one that answered last first) and the options. fmt
// would otherwise print the unexported fields, password included.
func (c *Client) String() string {
	return fmt.Sprintf("sentinel.Client{Master: %q, Addrs: %v, Options: %s}", c.master, c.Addrs(), c.opts)
}

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// Master returns the master name the Client asks about.
func (c *Client) Master() string { return c.master }

// Addrs returns the Sentinel addresses, the one that answered last first.
func (c *Client) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.addrs...)
}

// promote moves addr to the front, so that Replicas asks it first, as
// the Sentinel client guidelines recommend. VerifiedMasterAddr asks every
// Sentinel at once and breaks its ties by the order given to New: the
// Sentinel that answered last may be a stale one that answered alone
// while the others were down, and must not win a tie for that.
func (c *Client) promote(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, a := range c.addrs {
		if a == addr {
			copy(c.addrs[1:i+1], c.addrs[:i])
			c.addrs[0] = addr
			return
		}
	}
}

// Dial connects and authenticates to the Sentinel at addr, within
// DialTimeout and ctx. It also returns the network connection, which the
// caller may close from another goroutine to cut a blocked read short.
// A refused AUTH is a *QueryError holding a *pool.AuthError (it matches
// pool.ErrAuth), with no copy of the password. An address with
// credentials pasted into it is not dialed: the *QueryError matches
// ErrBadOptions, and its Addr hides the credentials (see CheckAddr).
func (c *Client) Dial(ctx context.Context, addr string) (redis.Conn, net.Conn, error) {
	if addrkey.HasCredentials(addr) {
		// Dialed, its failure would name the credentials as the host.
		return nil, nil, &QueryError{Addr: addrkey.Redact(addr), Err: CheckAddr(addr)}
	}
	var nc net.Conn // the TCP socket, which Close never blocks on
	o := c.opts
	var tc *tls.Config
	if o.TLSConfig != nil {
		tc = o.TLSConfig.Clone()
		if tc.ServerName == "" {
			tc.ServerName, _, _ = net.SplitHostPort(addr)
		}
	}
	opts := []redis.DialOption{
		redis.DialConnectTimeout(o.DialTimeout),
		redis.DialReadTimeout(o.ReadTimeout),
		redis.DialWriteTimeout(o.ReadTimeout),
		redis.DialContextFunc(func(ctx context.Context, network, a string) (net.Conn, error) {
			conn, err := (&net.Dialer{Timeout: o.DialTimeout}).DialContext(ctx, network, a)
			if err != nil || tc == nil {
				nc = conn
				return conn, err
			}
			// The handshake runs here, under ctx, rather than in
			// redigo, whose own handshake timeout (10 s) ignores
			// DialTimeout and ctx.
			tlsConn := tls.Client(conn, tc)
			if err := tlsConn.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, err
			}
			nc = conn
			return tlsConn, nil
		}),
	}
	if o.Password != "" {
		opts = append(opts, redis.DialPassword(o.Password))
		if o.Username != "" {
			opts = append(opts, redis.DialUsername(o.Username))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	conn, err := redis.DialContext(ctx, "tcp", addr, opts...)
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			// A refused AUTH. A server that does not know AUTH (renamed,
			// or a proxy) echoes its arguments, password included.
			re = scrubAuthReply(re, o.Password)
			if strings.HasPrefix(string(re), "ERR max number of clients") {
				// A full Sentinel's greeting, read as AUTH's reply: no
				// refusal of the credentials.
				return nil, nil, &QueryError{Addr: addr, Err: fmt.Errorf("AUTH: %w", re)}
			}
			user := o.Username
			if user == "" {
				user = "default"
			}
			return nil, nil, &QueryError{Addr: addr, Err: &pool.AuthError{Addr: addr, Username: user, Err: re}}
		}
		return nil, nil, &QueryError{Addr: addr, Err: err}
	}
	return conn, nc, nil
}

// echoMarker starts the part of Redis' "unknown command" reply that
// repeats the command's arguments.
const echoMarker = "with args beginning with:"

// scrubAuthReply is a server's reply to AUTH without the arguments it
// echoes and with any other copy of password masked as "***".
func scrubAuthReply(reply redis.Error, password string) redis.Error {
	text := string(reply)
	if i := strings.Index(text, echoMarker); i >= 0 {
		text = text[:i] + echoMarker + " (hidden)"
	}
	if password != "" {
		text = strings.ReplaceAll(text, password, "***")
	}
	return redis.Error(text)
}

// MasterAddr asks the Sentinels for the current master's address and
// returns the one most of them name (see VerifiedMasterAddr). A Sentinel
// that fails or does not know the master is skipped; when none answers,
// the error is a *SetError (which matches ErrNoSentinel, and
// ErrUnknownMaster when that is what the Sentinels said).
func (c *Client) MasterAddr(ctx context.Context) (addr, sentinel string, err error) {
	return c.VerifiedMasterAddr(ctx, nil)
}

// VerifiedMasterAddr is MasterAddr that also checks each answer with
// verify (typically ROLE on the named server): an answer that verify
// rejects counts as that Sentinel's failure and the next answer is
// checked. Right after a failover the Sentinels that did not lead it may
// name the old master for a second or two; this skips them.
//
// The Sentinels are asked in parallel, and the answers are checked by
// the number of Sentinels that gave them, most first: a stale Sentinel
// (partitioned, or restarted with an old configuration) may name a
// server that says it is a master, an old master restarted empty, and
// it must not win over the others because it was asked first. Once a majority of the Sentinels name the
// same master and verify accepts it, the others are not waited for.
// Among answers given by as many Sentinels, the one from the Sentinel
// whose view has the highest config epoch (SENTINEL MASTER, asked only
// then) is checked first: the view of the latest failover, which a
// stale Sentinel missed (an epoch counts only for the master that view
// names: a Sentinel whose view changed between the two replies, as it
// followed a failover, answers with its new view, its master and its
// epoch, and the answers are counted again; one in the middle of a
// failover gives none); among equal epochs (or epochs not known), in the
// order the Sentinels were given to New, whichever answered before: the
// same answers name the same master. (A stale Sentinel that answered
// alone while the others were down is the one that answered last, and
// would keep its master otherwise.) An answer whose epoch is not known
// (its Sentinels did not answer SENTINEL MASTER, or were failing over)
// is checked after one whose epoch is: nothing says it is the newer
// view (RankedMasterAddr also checks the others of such a tie, and takes
// the master its check ranks highest). verify is what turns down a stale view's master that the
// Sentinels have made a replica since; one that still says it is a
// master is taken until a query reads the epochs of both.
//
// Answers that name one server under two spellings ("localhost:6379" and
// "127.0.0.1:6379", as Sentinels with and without announce-hostnames
// give them; "::ffff:127.0.0.1" and "127.0.0.1", the case of a host
// name) count as one master. A host name other than localhost is looked
// up (within ctx and DialTimeout) only when two answers differ so: a
// name and an address it resolves to count as one master. The names of
// the answers in hand are looked up at once, so that a resolver that
// does not answer costs a query about one DialTimeout, not one for each
// Sentinel that announces host names. The grouping
// is transitive ("localhost:P" joins "127.0.0.1:P" and "[::1]:P"), so
// that it does not depend on which Sentinel answers first. Of a master's
// spellings, the one most of the answers in hand gave (among equals,
// the first in the order given to New) is checked and returned first.
func (c *Client) VerifiedMasterAddr(ctx context.Context, verify func(ctx context.Context, addr string) error) (addr, sentinel string, err error) {
	var rank func(ctx context.Context, addr string) (int, error)
	if verify != nil {
		rank = func(ctx context.Context, addr string) (int, error) { return 0, verify(ctx, addr) }
	}
	return c.masterAddr(ctx, rank, false)
}

// RankedMasterAddr is VerifiedMasterAddr whose check, rank, also gives a
// rank to each master it accepts: typically the number of replicas its
// ROLE lists. Answers that neither the number of Sentinels behind them
// nor the config epochs of their views tell apart (the user may not run
// SENTINEL MASTER, or the epochs are equal) are all checked, and the one
// of the highest rank is returned; only equal ranks leave it to the
// order of the Sentinels. A stale Sentinel listed first may name a server
// that still says it is a master (an old master partitioned from the
// others, or restarted empty); the replicas follow the master the
// Sentinels that led the failover made, and list under it, not under the
// stale one.
func (c *Client) RankedMasterAddr(ctx context.Context, rank func(ctx context.Context, addr string) (int, error)) (addr, sentinel string, err error) {
	if rank == nil {
		return c.masterAddr(ctx, nil, false)
	}
	return c.masterAddr(ctx, rank, true)
}

// masterAddr is VerifiedMasterAddr and RankedMasterAddr: rank (when not
// nil) checks each answer; ranked says that a tie the votes and epochs
// leave is broken by rank before the order of the Sentinels.
func (c *Client) masterAddr(ctx context.Context, rank func(ctx context.Context, addr string) (int, error), ranked bool) (addr, sentinel string, err error) {
	addrs := c.listed // read only
	type answer struct {
		i    int
		addr string
		err  error
	}
	qctx, cancel := context.WithCancel(ctx)
	ch := make(chan answer, len(addrs))
	var wg sync.WaitGroup
	defer func() {
		cancel() // the asks still in flight end at once
		wg.Wait()
	}()
	for i, s := range addrs {
		wg.Go(func() {
			if err := qctx.Err(); err != nil {
				ch <- answer{i: i, err: err}
				return
			}
			reply, err := c.ask(qctx, s, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", c.master)
			var a string
			if err == nil {
				a, err = ParseMasterAddr(reply)
			}
			ch <- answer{i: i, addr: a, err: err}
		})
	}
	named := make([]string, len(addrs)) // what each Sentinel named, "" if nothing
	errs := make([]error, len(addrs))
	checked := make([]bool, len(addrs))
	// Sentinels may spell one master differently (one that announces
	// host names says "localhost:P" or "redis-1:P", another
	// "127.0.0.1:P"): the votes go to the server. The answers that name
	// one server (sameServer, through the host names looked up) form a
	// group, taken transitively: "localhost:P" joins "127.0.0.1:P" and
	// "[::1]:P" whatever order the answers came in, so that the groups,
	// and the master chosen, depend on the answers only.
	parent := make([]int, len(addrs)) // union-find over the Sentinels' answers
	for i := range parent {
		parent[i] = i
	}
	var root func(i int) int
	root = func(i int) int {
		if parent[i] != i {
			parent[i] = root(parent[i])
		}
		return parent[i]
	}
	spelled := map[string]int{} // how many Sentinels gave each exact answer
	same := c.newLookups(ctx)
	defer same.close()
	// try checks the answers of the Sentinels in order not checked yet.
	try := func(order []int) (int, bool) {
		for _, i := range order {
			if checked[i] {
				continue
			}
			checked[i] = true
			if rank != nil {
				if _, verr := rank(ctx, named[i]); verr != nil {
					errs[i] = errtext.ErrorfIn("sentinel: ", "named %s, which failed the check: %w", named[i], verr)
					continue
				}
			}
			return i, true
		}
		return 0, false
	}
	// bySpelling orders the answers of one group: the spelling most
	// Sentinels gave first (it is the one returned, and dialled), then
	// in the order of addrs.
	bySpelling := func(x, y int) int {
		if d := spelled[named[y]] - spelled[named[x]]; d != 0 {
			return d
		}
		return x - y
	}
	// groups returns the votes and the first Sentinel (in addrs) of each
	// group, by its root.
	groups := func() (votes, first map[int]int) {
		votes, first = map[int]int{}, map[int]int{}
		for i, n := range named {
			if n == "" {
				continue
			}
			g := root(i)
			votes[g]++
			if f, ok := first[g]; !ok || i < f {
				first[g] = i
			}
		}
		return votes, first
	}
	quorum := len(addrs)/2 + 1
	for left := len(addrs); left > 0; {
		// The answers in hand are taken together: the host names they
		// need looked up are looked up at once (same.prepare), rather
		// than each within DialTimeout after the one before, and an
		// answer that comes while they are looked up joins them, its
		// names looked up alongside.
		batch := []answer{<-ch}
		left--
	drain:
		for left > 0 {
			select {
			case a := <-ch:
				batch = append(batch, a)
				left--
			default:
				break drain
			}
		}
	lookup:
		for {
			var pairs [][2]string
			for k, a := range batch {
				if a.err != nil {
					continue
				}
				for j, n := range named {
					if n != "" && j != a.i {
						pairs = append(pairs, [2]string{n, a.addr})
					}
				}
				for _, b := range batch[:k] {
					if b.err == nil {
						pairs = append(pairs, [2]string{b.addr, a.addr})
					}
				}
			}
			same.prepare(pairs)
			var more chan answer // nil, which never delivers, once all have answered
			if left > 0 {
				more = ch
			}
			for _, done := range same.pending() {
				select {
				case <-done:
				case a := <-more:
					batch = append(batch, a)
					left--
					continue lookup
				}
			}
			break
		}
		for _, a := range batch {
			if a.err != nil {
				errs[a.i] = a.err
				continue
			}
			named[a.i] = a.addr
			spelled[a.addr]++
			for j, n := range named {
				if j != a.i && n != "" && root(j) != root(a.i) && same.same(n, a.addr) {
					parent[root(j)] = root(a.i)
				}
			}
			g := root(a.i)
			votes, _ := groups()
			if votes[g] >= quorum {
				var order []int
				for i, n := range named {
					if n != "" && root(i) == g {
						order = append(order, i)
					}
				}
				slices.SortStableFunc(order, bySpelling)
				if i, ok := try(order); ok {
					c.promote(addrs[i])
					return named[i], addrs[i], nil
				}
			}
		}
	}
	votes, first := groups()
	// Groups with as many votes as another are told apart by the
	// config epochs of their Sentinels' views, asked for only then:
	// the highest is the view of the latest failover, which a Sentinel
	// that missed it (partitioned, or restarted with an old
	// configuration) does not have.
	groupsWith := map[int]int{} // the number of groups by their votes
	for _, v := range votes {
		groupsWith[v]++
	}
	var tied []int
	for i, n := range named {
		if n != "" && groupsWith[votes[root(i)]] > 1 {
			tied = append(tied, i)
		}
	}
	epoch := map[int]int64{} // by group: the highest config epoch of its Sentinels
	if len(tied) > 0 {
		views := c.configEpochs(ctx, addrs, named, tied)
		// A Sentinel whose view moved on since it named its master (it
		// followed a failover meanwhile) answers with its new view: the
		// latest it knows. Dropping it instead left the tie to the
		// epochs of the others, a stale Sentinel's lower one among them,
		// whose server (still saying it is a master) was then taken
		// though the Sentinel that knew more named another.
		moved := false
		for i, v := range views {
			if v.master != named[i] {
				spelled[named[i]]--
				named[i] = v.master
				spelled[v.master]++
				moved = true
			}
		}
		if moved {
			for i := range parent {
				parent[i] = i
			}
			var pairs [][2]string
			for i, a := range named {
				for j := range i {
					if b := named[j]; a != "" && b != "" {
						pairs = append(pairs, [2]string{a, b})
					}
				}
			}
			same.prepare(pairs)
			for i, a := range named {
				for j := range i {
					if b := named[j]; a != "" && b != "" && root(i) != root(j) && same.same(a, b) {
						parent[root(j)] = root(i)
					}
				}
			}
			votes, first = groups()
		}
		for i, v := range views {
			if cur, ok := epoch[root(i)]; !ok || v.epoch > cur {
				epoch[root(i)] = v.epoch
			}
		}
	}
	epochOf := func(g int) int64 { // -1: not known
		if e, ok := epoch[g]; ok {
			return e
		}
		return -1
	}
	var order []int
	for i, n := range named {
		if n != "" {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		gx, gy := root(x), root(y)
		if d := votes[gy] - votes[gx]; d != 0 {
			return d
		}
		if ex, ey := epochOf(gx), epochOf(gy); ex != ey {
			if ey > ex {
				return 1
			}
			return -1
		}
		if d := first[gx] - first[gy]; d != 0 {
			return d
		}
		return bySpelling(x, y)
	})
	pick := try
	if ranked {
		// The answers of the first tier (as many votes, as high an
		// epoch, as the first that passes the check) are all checked,
		// one spelling per group; the highest rank wins, the order
		// breaking equal ranks.
		pick = func(order []int) (int, bool) {
			best, bestRank, found := 0, 0, false
			var tierVotes int
			var tierEpoch int64
			passed := map[int]bool{} // the groups with an answer that passed
			for _, i := range order {
				g := root(i)
				if checked[i] || passed[g] {
					continue
				}
				if found && (votes[g] != tierVotes || epochOf(g) != tierEpoch) {
					break
				}
				checked[i] = true
				r, verr := rank(ctx, named[i])
				if verr != nil {
					errs[i] = errtext.ErrorfIn("sentinel: ", "named %s, which failed the check: %w", named[i], verr)
					continue
				}
				passed[g] = true
				if !found || r > bestRank {
					best, bestRank = i, r
				}
				if !found {
					found, tierVotes, tierEpoch = true, votes[g], epochOf(g)
				}
			}
			return best, found
		}
	}
	if i, ok := pick(order); ok {
		c.promote(addrs[i])
		return named[i], addrs[i], nil
	}
	var qerrs []error
	for i, s := range addrs {
		qerrs = append(qerrs, &QueryError{Addr: s, Err: errs[i]})
	}
	return "", "", &SetError{Master: c.master, Errs: qerrs}
}

// sameServer reports whether host:port addresses a and b name one
// server, also under two spellings (addrkey.Of).
func sameServer(a, b string) bool {
	return a == b || addrkey.Shares(addrkey.Of(a), addrkey.Of(b))
}

// lookupsAtOnce bounds the host names one query looks up at a time.
const lookupsAtOnce = 8

// lookups is sameServer for the answers of one query that also looks up
// the host names (other than localhost) of two answers that sameServer
// does not match: "redis-1:P", from a Sentinel that announces host
// names, and "10.0.0.1:P", from one that does not, name one server when
// redis-1 has that address. Each answer is looked up once per query,
// within ctx and DialTimeout from the start of its lookup; a name that
// does not resolve (or whose lookup did not end) matches only its own
// spellings: its Sentinel's vote is lost, as if it had not answered.
// Taking it for any answer with its port would be unsafe: servers
// commonly all listen on 6379, and a stale Sentinel's old master would
// join the current one's group (transitively, through the name), with
// its votes.
//
// The lookups that the answers in hand need are started together
// (prepare), up to lookupsAtOnce at a time, each waiting for its turn
// within its own DialTimeout: looked up one after another, with a
// resolver that does not answer, each answer with a host name added a
// DialTimeout to the query, past the caller's deadline with a few
// Sentinels that announce host names. Only the query's goroutine calls
// prepare and same.
type lookups struct {
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
	slots   chan struct{}
	byAddr  map[string]*pendingForms // by answer
	wg      sync.WaitGroup
}

// pendingForms is the forms of an answer, its looked-up addresses'
// included (addrkey.Lookup): set when done is closed.
type pendingForms struct {
	done  chan struct{}
	forms []string
}

// newLookups returns the lookups of one query within ctx; close ends
// those still going and waits for them.
func (c *Client) newLookups(ctx context.Context) *lookups {
	ctx, cancel := context.WithCancel(ctx)
	return &lookups{ctx: ctx, cancel: cancel, timeout: c.opts.DialTimeout,
		slots: make(chan struct{}, lookupsAtOnce), byAddr: map[string]*pendingForms{}}
}

// close ends the lookups still going (the query has its answer) and
// waits for their goroutines.
func (l *lookups) close() {
	l.cancel()
	l.wg.Wait()
}

// needs reports whether telling if a and b name one server takes a
// lookup: sameServer does not match them and one has a host name.
func needs(a, b string) bool {
	if sameServer(a, b) {
		return false
	}
	ha, _, erra := net.SplitHostPort(a)
	hb, _, errb := net.SplitHostPort(b)
	return erra == nil && errb == nil && (addrkey.NeedsLookup(ha) || addrkey.NeedsLookup(hb))
}

// prepare starts the lookups that comparing the pairs needs, all at
// once.
func (l *lookups) prepare(pairs [][2]string) {
	for _, p := range pairs {
		if needs(p[0], p[1]) {
			l.start(p[0])
			l.start(p[1])
		}
	}
}

// start starts the lookup of addr, unless it has begun already.
func (l *lookups) start(addr string) *pendingForms {
	if p, ok := l.byAddr[addr]; ok {
		return p
	}
	p := &pendingForms{done: make(chan struct{})}
	l.byAddr[addr] = p
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !addrkey.NeedsLookup(host) {
		p.forms = addrkey.Of(addr)
		close(p.done)
		return p
	}
	ctx, cancel := context.WithTimeout(l.ctx, l.timeout)
	l.wg.Go(func() {
		defer cancel()
		defer close(p.done)
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			p.forms = addrkey.Of(addr) // no turn in time: its own forms only
			return
		}
		p.forms = addrkey.Lookup(ctx, addr)
		<-l.slots
	})
	return p
}

// pending returns the done channels of the lookups still going.
func (l *lookups) pending() []chan struct{} {
	var out []chan struct{}
	for _, p := range l.byAddr {
		select {
		case <-p.done:
		default:
			out = append(out, p.done)
		}
	}
	return out
}

// same reports whether answers a and b name one server, looking their
// host names up (or waiting for the lookups prepare started) when needed.
func (l *lookups) same(a, b string) bool {
	if !needs(a, b) {
		return sameServer(a, b)
	}
	pa, pb := l.start(a), l.start(b)
	<-pa.done
	<-pb.done
	return addrkey.Shares(pa.forms, pb.forms)
}

// view is a Sentinel's view of the master: the master it names and the
// config epoch of that view.
type view struct {
	master string
	epoch  int64
}

// configEpochs asks the Sentinels addrs[i], for each i in which, in
// parallel for their view of the master (SENTINEL MASTER) and returns
// them by i. A Sentinel that fails, or whose reply has no config epoch
// or no usable master, is left out. The view's master is named[i] when
// the reply names that server (the same Sentinel spells one master the
// same way in both replies: no host name is looked up); otherwise the
// Sentinel's view moved on since it named named[i] (it followed a
// failover, or was given another master), and its view is the master
// the reply names, with that view's epoch: the epoch says nothing of the
// master it named before. A reply in the middle of a failover
// (failover_in_progress) that names another master is left out: it
// names the master being failed over from, with the new epoch already.
func (c *Client) configEpochs(ctx context.Context, addrs, named []string, which []int) map[int]view {
	got := make([]view, len(which))
	ok := make([]bool, len(which))
	var wg sync.WaitGroup
	for k, i := range which {
		wg.Go(func() {
			reply, err := c.ask(ctx, addrs[i], "SENTINEL", "MASTER", c.master)
			if err != nil {
				return
			}
			e, m, inFailover, eok := parseConfigEpoch(reply)
			switch {
			case !eok || m == "":
			case sameServer(m, named[i]):
				got[k], ok[k] = view{master: named[i], epoch: e}, true
			case !inFailover:
				got[k], ok[k] = view{master: m, epoch: e}, true
			}
		})
	}
	wg.Wait()
	out := make(map[int]view, len(which))
	for k, i := range which {
		if ok[k] {
			out[i] = got[k]
		}
	}
	return out
}

// Replicas asks the Sentinels in turn for the master's replicas, the one
// that answered MasterAddr last first, and returns the first answer.
func (c *Client) Replicas(ctx context.Context) ([]Replica, error) {
	var errs []error
	for _, s := range c.Addrs() {
		if err := ctx.Err(); err != nil {
			errs = append(errs, &QueryError{Addr: s, Err: err})
			break
		}
		reply, err := c.ask(ctx, s, "SENTINEL", "REPLICAS", c.master)
		if err == nil {
			var reps []Replica
			if reps, err = ParseReplicas(reply); err == nil {
				return reps, nil
			}
		}
		errs = append(errs, &QueryError{Addr: s, Err: err})
	}
	return nil, &SetError{Master: c.master, Errs: errs}
}

// ask sends one command to the Sentinel at addr on a fresh connection. A
// server error reply is returned as the reply (the parsers judge it).
func (c *Client) ask(ctx context.Context, addr string, name string, args ...any) (any, error) {
	conn, _, err := c.Dial(ctx, addr)
	if err != nil {
		var qe *QueryError
		if errors.As(err, &qe) {
			return nil, qe.Err
		}
		return nil, err
	}
	defer conn.Close()
	reply, err := redis.DoContext(conn, ctx, name, args...)
	var re redis.Error
	if errors.As(err, &re) {
		return re, nil
	}
	return reply, err
}

// CheckRole sends ROLE on conn (a connection to a data node) and returns
// the parsed answer.
func CheckRole(ctx context.Context, conn redis.Conn) (Role, error) {
	reply, err := redis.DoContext(conn, ctx, "ROLE")
	var re redis.Error
	if err != nil && !errors.As(err, &re) {
		return Role{}, err
	}
	if err != nil {
		reply = re
	}
	return ParseRole(reply)
}
