// Package cmdspec reads the command table of a running Redis server (its
// COMMAND reply) and renders it as the Go source of package command.
//
// It backs the package's generator and the test that checks the committed
// table is what the server reports today.
package cmdspec

// Command is one entry of the COMMAND reply, or one of its subcommands.
type Command struct {
	// Name is the lower-case name; subcommands are "parent|sub".
	Name string
	// Arity is the argument count including the name; negative means
	// "at least -Arity".
	Arity int
	// Flags are the command flags as the server spells them.
	Flags []string
	// FirstKey, LastKey and Step are the legacy key range.
	FirstKey, LastKey, Step int
	// ACLCategories are the ACL categories, "@" included.
	ACLCategories []string
	// Tips are the command tips ("request_policy:all_shards", ...).
	Tips []string
	// KeySpecs are the key specifications, in server order.
	KeySpecs []KeySpec
	// Subcommands are the subcommands, sorted by name.
	Subcommands []Command
}

// KeySpec is one key specification of a command.
type KeySpec struct {
	// Flags are the key spec flags as the server spells them.
	Flags []string
	// Begin is "index", "keyword" or "unknown".
	Begin string
	// Index is the begin_search index (Begin == "index").
	Index int
	// Keyword and StartFrom describe a keyword search (Begin == "keyword").
	Keyword   string
	StartFrom int
	// Find is "range", "keynum" or "unknown".
	Find string
	// LastKey, KeyStep and Limit describe a range (Find == "range");
	// KeyStep is shared with keynum.
	LastKey, KeyStep, Limit int
	// KeyNumIdx and FirstKey describe a keynum search (Find == "keynum").
	KeyNumIdx, FirstKey int
}
