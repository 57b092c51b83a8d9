// Package sentinel talks to Redis Sentinel: it asks the Sentinels of a
// monitored master set for the current master (SENTINEL
// GET-MASTER-ADDR-BY-NAME, all of them, taking the answer most of them
// give), checks a server's
// role with ROLE, lists the set's replicas (SENTINEL REPLICAS) and watches
// failovers through the Sentinels' +switch-master messages.
//
// The reply parsers (ParseMasterAddr, ParseRole, ParseReplicas,
// ParseSwitchMaster) accept what redigo returns for RESP2 replies and
// reject anything else with an error wrapping ErrBadReply; they never
// panic. Client and Watch add the network side on top of them.
package sentinel
