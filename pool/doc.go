// Package pool keeps one redigo connection pool per Redis node address.
//
// A Set creates the pool for an address the first time a connection to it is
// asked for, dials every connection with the same Options (timeouts, ACL
// credentials, database, client name, TLS) and closes the pools on Close.
// Callers borrow a connection with Get, use it as a redis.Conn and return it
// with Close, exactly as with a redis.Pool:
//
//	set, err := pool.NewSet(pool.Options{Password: secret})
//	if err != nil { ... }
//	defer set.Close()
//	c, err := set.Get(ctx, "10.0.0.7:6379")
//	if err != nil { ... }
//	defer c.Close()
//	n, err := redis.Int(c.Do("INCR", "visits"))
//
// The connections in the pools speak RESP themselves, with redigo's
// semantics (the same reply values, argument conversions, pending counts
// and failure rules), but with one write buffer and one read buffer of
// their own and no lock per command; a reply stream that is not valid RESP
// fails the connection with an error matching ErrProtocol.
//
// A borrowed connection is always in the state a fresh one has. Besides
// what redigo's pool undoes (an open transaction, SUBSCRIBE, PSUBSCRIBE,
// MONITOR), a connection whose caller changed it (SELECT, SSUBSCRIBE,
// AUTH, HELLO 3, RESET, READONLY, CLIENT TRACKING, SETNAME, REPLY OFF,
// NO-EVICT, SCRIPT DEBUG YES, an ASKING with no command after it, keys
// still watched after an EXEC without MULTI, ...), or that the server may
// be closing (QUIT, CLIENT KILL, ACL DELUSER of its own user, ACL LOAD, a
// protocol error reply), is closed when it is next borrowed, and a new
// one dialled. A connection given back with a reply pending that may
// never come (a blocking command's, BLPOP or XREAD BLOCK sent and not
// read, or any after CLIENT REPLY OFF) is closed at once instead of read:
// Close does not wait for it, nor takes an element the command pops
// meanwhile. Inside MULTI the server only queues such a command, but
// only if it accepted the MULTI: a connection is drained and kept only
// when the MULTI's +OK was read before it was given back.
//
// Redis Cluster replicas serve reads only after a READONLY command on the
// connection; GetReadOnly borrows from a second pool per address whose
// connections sent it while dialing, and refuses (a *DialError) a replica
// that has not synced with its master yet.
//
// Errors are matchable: a failed dial is a *DialError naming the address, a
// refused AUTH is an *AuthError (errors.Is(err, ErrAuth)), bad options wrap
// ErrBadOptions, a closed Set answers ErrClosed and a closed connection
// ErrConnClosed. No error, and no String
// method, ever contains the configured password.
package pool
