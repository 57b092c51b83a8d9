package command

// RequestPolicy is a command's request_policy tip: how a cluster client
// should spread a call over the shards. The zero value means no tip: send
// the call to the node that owns its keys, or to any node when it has none.
type RequestPolicy uint8

// The request policies Redis documents.
const (
	// RequestDefault: no request_policy tip.
	RequestDefault RequestPolicy = iota
	// RequestAllNodes: send to every node, primaries and replicas.
	RequestAllNodes
	// RequestAllShards: send to every primary.
	RequestAllShards
	// RequestMultiShard: split the keys by shard and send each part to its
	// owner.
	RequestMultiShard
	// RequestSpecial: needs command-specific handling.
	RequestSpecial
)

var requestNames = [...]string{"", "all_nodes", "all_shards", "multi_shard", "special"}

// String returns the tip value ("all_shards", ...), or "" for RequestDefault.
func (p RequestPolicy) String() string {
	if int(p) < len(requestNames) {
		return requestNames[p]
	}
	return "unknown"
}

// ResponsePolicy is a command's response_policy tip: how a cluster client
// should merge the replies of a call sent to several shards. The zero value
// means no tip.
type ResponsePolicy uint8

// The response policies Redis documents.
const (
	// ResponseDefault: no response_policy tip.
	ResponseDefault ResponsePolicy = iota
	// ResponseOneSucceeded: succeed when any shard succeeded.
	ResponseOneSucceeded
	// ResponseAllSucceeded: succeed when every shard succeeded.
	ResponseAllSucceeded
	// ResponseAggLogicalAnd: AND the integer replies.
	ResponseAggLogicalAnd
	// ResponseAggLogicalOr: OR the integer replies.
	ResponseAggLogicalOr
	// ResponseAggMin: the smallest integer reply.
	ResponseAggMin
	// ResponseAggMax: the largest integer reply.
	ResponseAggMax
	// ResponseAggSum: the sum of the integer replies.
	ResponseAggSum
	// ResponseSpecial: needs command-specific handling.
	ResponseSpecial
)

var responseNames = [...]string{
	"", "one_succeeded", "all_succeeded", "agg_logical_and", "agg_logical_or", "agg_min", "agg_max", "agg_sum", "special",
}

// String returns the tip value ("agg_sum", ...), or "" for ResponseDefault.
func (p ResponsePolicy) String() string {
	if int(p) < len(responseNames) {
		return responseNames[p]
	}
	return "unknown"
}
