package shard

// Node is one Redis server that the client sends commands to.
type Node struct {
	// Name is the label users see: the configured shard name, or Addr when
	// the shard has no name.
	Name string
	// Addr is the server's host:port.
	Addr string
}

// String returns the node's label.
func (n Node) String() string {
	if n.Name != "" {
		return n.Name
	}
	return n.Addr
}

// Router maps a key to the node that serves it and lists the nodes.
//
// A ring router (client-side consistent hashing over plain Redis servers)
// and a slot router (Redis Cluster hash slots) both implement it, so the
// client that executes commands depends on nothing else. Implementations
// are safe for concurrent use.
//
// The client calls a Router given in Config.Router on the callers'
// goroutines and on its own (the health checks list its Nodes). A panic
// there is recovered (see PanicError): Route's fails the command it was
// routing, Nodes' goes to Hooks.Panic and the client keeps the list Nodes
// returned last. New, Config.Validate and StartMigration, which list its
// Nodes before there is a list to fall back on, return such a panic (or
// one of TopologyIDer.TopologyID) as an error matching ErrBadConfig and
// *PanicError.
// Client.Router returns the Router as it was given.
//
// A Router may change its nodes at run time. Route's answer is where the
// next command goes, at once: a node it has not listed is dialed as it
// is (an address that is another spelling of a listed node's, such as
// localhost:P for 127.0.0.1:P, is that node; see docs/config.md).
// Client.Nodes, ForEachShard and Scan read Nodes at each call. What the
// client keeps per node follows Nodes as read on each health tick and
// when a migration installs a topology: the names in Stats, NodeError and
// the hooks' events (a renamed node is reported under its old name until
// then), which nodes are health-checked, and the retirement of a node
// Nodes no longer lists. With health checks off (HealthOptions.Interval
// below 0) that happens only at installs.
type Router interface {
	// Route returns the node that serves key.
	Route(key string) (Node, error)
	// Nodes returns every node that serves keys, in a stable order. A
	// server listed under two names and one address (two ranges of keys
	// on one server) is one node to the client: Client.Nodes,
	// ForEachShard and Scan list and visit it once, under its first name.
	Nodes() []Node
}
