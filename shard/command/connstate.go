package command

// ConnEffect says what a command does to the connection that runs it,
// beyond its reply. A client that shares connections between callers (a
// pool) must not hand a connection on to another caller after a command
// with an effect other than Stateless, unless it restored the connection
// first.
type ConnEffect uint8

// The connection effects.
const (
	// Stateless: the connection is as it was (GET, SET, CLIENT GETNAME,
	// CLIENT REPLY ON, HELLO 2 without options, ...).
	Stateless ConnEffect = iota
	// SetsState: the connection keeps a setting that a fresh one does not
	// have: its user (AUTH, HELLO ... AUTH), its name (CLIENT SETNAME,
	// CLIENT SETINFO, HELLO ... SETNAME), client-side caching (CLIENT
	// TRACKING, CLIENT CACHING), CLIENT NO-EVICT, CLIENT NO-TOUCH, Valkey's
	// CLIENT CAPA (with "redirect", a replica answers reads with -REDIRECT
	// to its master instead of serving them) and CLIENT IMPORT-SOURCE (the
	// connection counts as an import source), READONLY, READWRITE, the
	// ASKING flag, the Lua debugger (SCRIPT DEBUG YES or
	// SYNC: the next EVAL starts a debugging session instead of running
	// its script), or everything at once (RESET, which also undoes what
	// the connection was set up with) or its end (QUIT).
	SetsState
	// Database: SELECT moves the connection to another database.
	Database
	// Protocol: HELLO 3 switches the connection to RESP3.
	Protocol
	// Transaction: WATCH, UNWATCH, MULTI, EXEC and DISCARD open or close a
	// transaction that spans several commands of the connection.
	Transaction
	// Subscribe: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UN- forms put
	// the connection in (or belong to) subscribe mode, where it accepts
	// nothing but pub/sub commands.
	Subscribe
	// Exclusive: the connection stops answering commands normally: MONITOR
	// streams every command the server runs, CLIENT REPLY OFF and SKIP
	// silence the replies, SYNC and PSYNC make it a replica's link (the
	// server streams its data set and writes, and answers nothing else),
	// REPLCONF belongs to such a link (the server never answers its ACK
	// and GETACK forms).
	Exclusive
	// Disconnects: the command may make the server close connections, the
	// one that sent it among them, once its reply is out; the connection
	// keeps no state, but it may be closed under the next caller. CLIENT
	// KILL in every form (its filter may match the sender: SKIPME no, a
	// USER or TYPE filter, or the old form with the sender's own address),
	// ACL DELUSER (the clients of the users it removes, the sender's own
	// user among them) and ACL LOAD (the clients of the users it removes
	// or changes; before Redis 7.2, every client). A pool retires the
	// connection after it.
	Disconnects
)

var effectNames = [...]string{"stateless", "sets state", "database", "protocol", "transaction", "subscribe", "exclusive", "disconnects"}

// String returns the effect's name.
func (e ConnEffect) String() string {
	if int(e) < len(effectNames) {
		return effectNames[e]
	}
	return "unknown"
}

// watchInfo is WATCH's entry: the one command with keys that changes the
// connection's state.
var watchInfo = Lookup("watch")

// EffectOf classifies a call of the command named name with args (the
// arguments after the name). info is the command's entry from Lookup, or
// nil to have EffectOf look it up. Subcommands newer than the table
// (CLIENT SETINFO, CLIENT NO-TOUCH, Valkey's CLIENT CAPA and CLIENT
// IMPORT-SOURCE) are recognised by name. An argument is read as it is
// sent: one of a type that Arg does not know (a Stringer, say) as fmt
// prints it. It does not allocate for the argument types Arg knows.
func EffectOf(info *Info, name string, args []any) ConnEffect {
	if info == nil {
		if info = Lookup(name); info == nil {
			return Stateless // a module's command, or one newer than the table
		}
	}
	if info.hasKeys && info != watchInfo {
		return Stateless // the fast path: of the commands on keys, only WATCH
	}
	switch info.Name {
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe":
		return Subscribe
	case "monitor", "sync", "psync", "replconf":
		return Exclusive
	case "watch", "unwatch", "multi", "exec", "discard":
		return Transaction
	case "select":
		return Database
	case "auth", "readonly", "readwrite", "reset", "quit", "asking":
		return SetsState
	case "hello":
		return helloEffect(args)
	case "client":
		return clientEffect(args)
	case "acl":
		return aclEffect(args)
	case "script":
		return scriptEffect(args)
	}
	return Stateless
}

// scriptEffect classifies SCRIPT DEBUG YES|SYNC, after which the next
// EVAL of the connection starts a Lua debugging session (SYNC blocks the
// whole server while it lasts); SCRIPT DEBUG NO, which ends that mode,
// and the other SCRIPT subcommands change nothing.
func scriptEffect(args []any) ConnEffect {
	if len(args) > 0 && argIs(args[0], "debug") && !(len(args) > 1 && argIs(args[1], "no")) {
		return SetsState // YES, SYNC (or a bad mode the server refuses)
	}
	return Stateless
}

// helloEffect classifies HELLO [protover [AUTH user pass] [SETNAME name]].
func helloEffect(args []any) ConnEffect {
	if len(args) == 0 {
		return Stateless
	}
	if !argIs(args[0], "2") {
		return Protocol // 3, or a version the server will refuse
	}
	if len(args) > 1 {
		return SetsState // AUTH or SETNAME
	}
	return Stateless
}

// clientEffect classifies the CLIENT subcommands that change the
// connection that sends them.
func clientEffect(args []any) ConnEffect {
	if len(args) == 0 {
		return Stateless
	}
	sub := args[0]
	switch {
	case argIs(sub, "reply"):
		if len(args) > 1 && argIs(args[1], "on") {
			return Stateless
		}
		return Exclusive // OFF, SKIP (or a bad mode the server refuses)
	case argIs(sub, "setname"), argIs(sub, "setinfo"), argIs(sub, "tracking"),
		argIs(sub, "caching"), argIs(sub, "no-evict"), argIs(sub, "no-touch"),
		argIs(sub, "capa"), argIs(sub, "import-source"):
		return SetsState
	case argIs(sub, "kill"):
		return Disconnects
	}
	return Stateless
}

// aclEffect classifies the ACL subcommands that may close the connection
// that sends them: DELUSER and LOAD.
func aclEffect(args []any) ConnEffect {
	if len(args) > 0 && (argIs(args[0], "deluser") || argIs(args[0], "load")) {
		return Disconnects
	}
	return Stateless
}
