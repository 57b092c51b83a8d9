package pool

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// ErrNoAddr is wrapped by the dial error of a name whose resolver has no
// address for it yet.
var ErrNoAddr = errors.New("shardis: no address known")

// SetResolver makes name (which must not be a host:port) the key of pools
// that dial whatever address resolve returns at the moment of each dial,
// for nodes whose address can change while their identity stays, such as
// a Sentinel-monitored master. Connections already made keep talking to
// the address they were dialed to: call Remove(name) when the address
// changes so that the pools start over. The dial error of a failed
// resolve wraps its error (use ErrNoAddr for "not known yet").
//
// Set the resolver before the first Get for name; setting it again
// replaces it for pools created later.
func (s *Set) SetResolver(name string, resolve func() (string, error)) error {
	if resolve == nil {
		return fmt.Errorf("%w: nil resolver for %q", ErrBadOptions, name)
	}
	if checkAddr(name) == nil {
		return fmt.Errorf("%w: resolver name %q is an address", ErrBadOptions, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.resolvers == nil {
		s.resolvers = make(map[string]func() (string, error))
	}
	s.resolvers[name] = resolve
	return nil
}

// target returns the address to dial now and its TLS configuration.
func (d *dialer) target() (string, *tls.Config, error) {
	if d.resolve == nil {
		return d.addr, d.tls, nil
	}
	addr, err := d.resolve()
	if err == nil {
		err = checkAddr(addr)
	}
	if err != nil {
		return "", nil, &DialError{Addr: d.addr, Err: err}
	}
	tc := d.tls
	if d.opts.TLSConfig != nil {
		tc = d.opts.TLSConfig.Clone()
		if tc.ServerName == "" {
			tc.ServerName, _, _ = net.SplitHostPort(addr)
		}
	}
	return addr, tc, nil
}
