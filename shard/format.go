package shard

import (
	"fmt"
	"io"
)

// The values that hold a client print as a short description with every
// fmt verb (%T and %p aside), never as their fields: fmt would read those
// by reflection while the client's goroutines change them (a data race),
// and they lead to the configuration, password included.

// describe writes "shard.Kind{client: ...}" for v, held by client(v).
func describe[T any](f fmt.State, kind string, v *T, client func(*T) *Client) {
	if v == nil {
		io.WriteString(f, "shard."+kind+"(nil)")
		return
	}
	io.WriteString(f, "shard."+kind+"{client: "+client(v).String()+"}")
}

// Format writes c.String() for every verb.
func (c *Client) Format(f fmt.State, verb rune) { io.WriteString(f, c.String()) }

// Format describes the pipeline by its client, for every verb.
func (p *Pipeline) Format(f fmt.State, verb rune) {
	describe(f, "Pipeline", p, func(p *Pipeline) *Client { return p.c })
}

// Format describes the scanner by its client, for every verb.
func (s *Scanner) Format(f fmt.State, verb rune) {
	describe(f, "Scanner", s, func(s *Scanner) *Client { return s.c })
}

// Format describes the subscription by its client, for every verb.
func (s *Subscription) Format(f fmt.State, verb rune) {
	describe(f, "Subscription", s, func(s *Subscription) *Client { return s.c })
}

// Format describes the transaction by its client, for every verb.
func (tx *Tx) Format(f fmt.State, verb rune) {
	describe(f, "Tx", tx, func(tx *Tx) *Client { return tx.c })
}

// Format describes the connection (Client.Conn) by its client, for every
// verb.
func (rc *routedConn) Format(f fmt.State, verb rune) {
	describe(f, "Conn", rc, func(rc *routedConn) *Client { return rc.c })
}
