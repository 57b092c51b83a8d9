// Package cluster implements Redis Cluster hash slots, the slot table and
// redirect parsing.
//
// Every key of a Redis Cluster belongs to one of [SlotCount] hash slots:
// [Slot] computes it the way the server does (CRC16 of the key's hash tag,
// see [hashtag.Cluster]), so a client can send each command straight to the
// node that serves the slot.
package cluster
