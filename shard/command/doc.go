// Package command describes every Redis command: its arity, its flags
// (does it write, is it read-only, does it block, ...) and where its keys
// are among the arguments.
//
// The table is generated from the COMMAND reply of a real Redis 7 server
// (see RedisVersion), key specifications included, and KeyPositions reads
// the keys out of a call's arguments the way the server itself does. A
// router uses it to learn which arguments decide the node of a call:
//
//	info := command.Lookup("ZUNIONSTORE")
//	pos, err := info.KeyPositions([]any{"dst", 2, "a", "b"}, nil) // [0 2 3]
//
// Everything in the package is immutable after initialisation and safe for
// concurrent use; the *Info values returned by Lookup are shared and must
// not be modified.
//
// The table is regenerated with go generate, which starts a throw-away
// redis-server on a free 127.0.0.1 port:
//
//	go generate ./shard/command
//
// # Keys that key specifications do not describe
//
// A few commands declare key specs the server itself cannot evaluate and
// resolves with hand-written code instead; rules.go holds the equivalent
// rules, and the tests compare them with COMMAND GETKEYS:
//
//   - SORT and SORT_RO: the key to sort is the first argument; SORT also
//     writes the key after STORE (the last STORE wins, LIMIT/GET/BY
//     arguments are skipped). Keys named by BY and GET patterns are built
//     from the sorted data at run time and cannot be known in advance.
//   - MIGRATE with the KEYS option: the keys are every argument after KEYS,
//     found by scanning the options from the sixth argument on (AUTH takes
//     one argument, AUTH2 two); the key argument must then be empty.
//
// SET and BITFIELD declare key specs whose read/write flags depend on the
// arguments; their key positions do not, so the specs are used as they are.
// Sharded pub/sub commands (SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE) have no keys,
// but their channels hash to slots like keys: ChannelPositions finds them.
//
// # What a command does to its connection
//
// EffectOf classifies a call as Stateless or by the state it leaves on the
// connection that ran it (a database, a name or user, subscribe mode,
// MONITOR, an open transaction, RESP3) or by the connections it may close
// (CLIENT KILL, ACL DELUSER, ACL LOAD: Disconnects), so that a client
// sharing connections between callers can refuse it, or restore or close
// the connection before anyone else uses it.
//
// # Where KeyPositions is stricter than COMMAND GETKEYS
//
// When the key count of EVAL, EVALSHA, FCALL or their _RO forms is not an
// integer, is negative or exceeds the arguments, COMMAND GETKEYS answers
// with no keys (these commands may run without keys), but the server
// refuses to run such a call; KeyPositions reports ErrBadArgs. A keyless
// command gives no keys and no error, where COMMAND GETKEYS says the
// command has no key arguments. Otherwise the two agree, errors included.
//
// # Commands newer than the table
//
// FromCommandInfo builds an Info at run time from a server's COMMAND INFO
// entry, for commands the table lacks (later Redis versions, Valkey,
// modules, rename-command). Package shard learns such commands on their
// first call, checks the key positions against COMMAND GETKEYS and caches
// them per client; Lookup stays the fast path and never returns them.
package command

//go:generate go run ./internal/gen -o commands_gen.go
