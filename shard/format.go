package shard

import (
	"fmt"
	"io"
)

// The values that hold a client print as a short description with every
// fmt verb (%T and %p aside), never as their fields: fmt would read those
// by reflection while the client's goroutines change them (a data race),
// and they lead to the configuration, password included.

// describe writes what kind of value holds c, and c's description.
func describe(f fmt.State, kind string, c *Client) {
	io.WriteString(f, "shard."+kind+"{client: "+c.String()+"}")
}

// Format writes c.String() for every verb.
func (c *Client) Format(f fmt.State, verb rune) { io.WriteString(f, c.String()) }

// Format describes the pipeline by its client, for every verb.
func (p *Pipeline) Format(f fmt.State, verb rune) {
	if p == nil {
		io.WriteString(f, "shard.Pipeline(nil)")
		return
	}
	describe(f, "Pipeline", p.c)
}

// Format describes the scanner by its client, for every verb.
func (s *Scanner) Format(f fmt.State, verb rune) {
	if s == nil {
		io.WriteString(f, "shard.Scanner(nil)")
		return
	}
	describe(f, "Scanner", s.c)
}

// Format describes the subscription by its client, for every verb.
func (s *Subscription) Format(f fmt.State, verb rune) {
	if s == nil {
		io.WriteString(f, "shard.Subscription(nil)")
		return
	}
	describe(f, "Subscription", s.c)
}

// Format describes the transaction by its client, for every verb.
func (tx *Tx) Format(f fmt.State, verb rune) {
	if tx == nil {
		io.WriteString(f, "shard.Tx(nil)")
		return
	}
	describe(f, "Tx", tx.c)
}

// Format describes the connection (Client.Conn) by its client, for every
// verb.
func (rc *routedConn) Format(f fmt.State, verb rune) {
	if rc == nil {
		io.WriteString(f, "shard.Conn(nil)")
		return
	}
	describe(f, "Conn", rc.c)
}
