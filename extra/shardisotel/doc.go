// Package shardisotel traces and measures a shardis client with OpenTelemetry.
//
// Spans are named, and measurements carry db.operation.name, after the
// command in upper case (shard.CommandEvent.Operation): a command of the
// command table, one the client learned from the servers, or one shaped
// like a module's (FT.SEARCH, among the first shard.MaxModuleOperations
// such names); any other name (a typo, a name built from data) is
// OtherOperation ("OTHER"), so that the names callers pass to Do cannot
// grow the number of series or span names without bound.
//
// A command that was redirected or retried is one span: each attempt
// that did not succeed is an event on it (a "redirect" naming the node
// that sent it and the next one, or an "attempt failed" naming its node
// and outcome), the span's server.address and server.port are those of
// the node that gave the final reply, shardis.attempts (AttemptsKey) says
// how many times it was sent, and its status is Error only when that final
// reply is an error. The error.type of an attempt the client retried, and
// of an operation that gave up retrying, is its cause: the server's reply
// (CLUSTERDOWN, LOADING, TRYAGAIN, ...), node_down, dial, auth, timeout
// or io, as shard.ErrorCause names them. So is that of a failure the client does not retry (outcome
// failed: a node marked down or unreachable in ring mode), "failed" when
// it had no reply from a node to blame (a command refused before it was
// sent, a closed client). Credentials a server refused are its code
// (WRONGPASS) on the operation's span, "auth" on the dial's measurement.
//
// An operation spread over several nodes (a pipeline, a multi-key
// command split over slots or shards, an MGET say) has a child span per
// node it reached and per attempt, named after the part and the node's
// server ("PIPELINE host:port", "MGET host:port"), with that node's
// server.address and server.port: a node that got several commands is a
// shard.PipelineEvent, one that got a single command a
// shard.CommandEvent (of a pipeline, named after that command, or a
// split command's part, shard.CommandEvent.Part, named after the
// caller's command).
//
// A transaction (shard.Client.Tx) is one span named MULTI, every attempt
// included, on the node of its last attempt: its WATCH and Tx.Do commands
// are measured under their own names, each MULTI ... EXEC is a child span
// "MULTI host:port" measured as MULTI (shard.PipelineEvent.Operation), and
// a transaction aborted by
// a watched key (shard.ErrTxAborted) has status Error with error.type
// server_error. With statements on, its db.query.text is its WATCH, then,
// once it ended, its MULTI ... EXEC too.
//
// ObserveSubscription does the same for a pub/sub subscription's counters
// (shard.SubscriptionStats: messages dropped for a full buffer,
// connections lost), with the attributes it is given.
//
// The gauges and counters of Observe follow the client's nodes: a node
// the client retired (shard.NodeRetired) is no longer observed, and its
// series go. The instruments fed per attempt (db.client.operation.duration,
// shardis.client.redirects, shardis.client.retries,
// shardis.client.node.events, db.client.connection.create_time) are
// synchronous instruments, whose series OpenTelemetry cannot delete: with
// cumulative temporality the SDK goes on exporting those of a retired node
// with their last values; with delta temporality they stop once the node
// gets no more attempts. Prometheus users who need them gone can use
// shardisprom, whose series of a retired node are deleted.
package shardisotel
