// Package shardisotel traces and measures a shardis client with OpenTelemetry.
//
// Spans are named, and measurements carry db.operation.name, after the
// command in upper case; a name the command table does not know
// (command.Lookup returns nil: a typo, a name built from data, a module's
// command) is OtherOperation ("OTHER"), so that the names callers pass to
// Do cannot grow the number of series or span names without bound.
package shardisotel
