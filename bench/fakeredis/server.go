package main

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"sync"
)

// server answers every connection accepted on its listener from its
// pre-encoded replies.
type server struct {
	r *replies

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newServer(r *replies) *server {
	return &server{r: r, conns: map[net.Conn]struct{}{}}
}

// serve accepts connections until ln is closed, then closes every
// connection and waits for their goroutines.
func (s *server) serve(ln net.Listener) error {
	defer func() {
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			s.handle(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		})
	}
}

// handle reads commands and writes their replies until the client goes
// away or sends something that is not RESP: every command a read brought
// in is answered with one write, which never keeps the next read waiting
// (see replyWriter). It returns once every reply is written.
func (s *server) handle(c net.Conn) {
	w := newReplyWriter(c)
	defer w.flush()
	cs := connState{proto: 2}
	in := make([]byte, 64<<10)
	var out []byte
	var args [][]byte
	r, end := 0, 0
	for {
		if end == len(in) {
			if r > 0 {
				end = copy(in, in[r:end])
				r = 0
			} else {
				in = append(in, make([]byte, len(in))...)
			}
		}
		n, err := c.Read(in[end:])
		end += n
		for r < end {
			var used int
			var perr error
			args, used, perr = parseCommand(in[r:end], args)
			if perr != nil {
				out = append(out, "-ERR "...)
				out = append(out, perr.Error()...)
				out = append(out, "\r\n"...)
				w.write(out)
				return
			}
			if used == 0 {
				break
			}
			r += used
			if len(args) > 0 {
				var quit bool
				out, quit = s.answer(out, &cs, args)
				if quit {
					w.write(out)
					return
				}
			}
		}
		if r == end {
			r, end = 0, 0
		}
		if len(out) > 0 {
			if werr := w.write(out); werr != nil {
				return
			}
			out = out[:0]
		}
		if err != nil {
			return
		}
	}
}

// connState is what a connection remembers between commands.
type connState struct {
	proto int // 2 or 3, set by HELLO
}

// answer appends the reply to one command; quit is true after QUIT.
func (s *server) answer(out []byte, cs *connState, args [][]byte) (_ []byte, quit bool) {
	r := s.r
	name := args[0]
	switch {
	case is(name, "SET"):
		if len(args) < 3 {
			return wrongArgs(out, "set"), false
		}
		return append(out, "+OK\r\n"...), false
	case is(name, "GET"):
		if len(args) != 2 {
			return wrongArgs(out, "get"), false
		}
		return append(out, r.get...), false
	case is(name, "MGET"):
		if len(args) < 2 {
			return wrongArgs(out, "mget"), false
		}
		out = arrayHeader(out, len(args)-1)
		for range len(args) - 1 {
			out = append(out, r.get...)
		}
		return out, false
	case is(name, "PING"):
		if len(args) > 2 {
			return wrongArgs(out, "ping"), false
		}
		if len(args) == 2 {
			return bulk(out, string(args[1])), false
		}
		return append(out, "+PONG\r\n"...), false
	case is(name, "HELLO"):
		if len(args) > 1 {
			v, err := strconv.Atoi(string(args[1]))
			if err != nil || v < 2 || v > 3 {
				return append(out, "-NOPROTO unsupported protocol version\r\n"...), false
			}
			cs.proto = v
		}
		return append(out, r.hello[cs.proto-2]...), false
	case is(name, "CLUSTER"):
		return s.cluster(out, cs, args), false
	case is(name, "COMMAND"):
		return s.command(out, cs, args), false
	case is(name, "DEL"), is(name, "EXISTS"), is(name, "UNLINK"), is(name, "TOUCH"):
		return integer(out, len(args)-1), false
	case is(name, "DBSIZE"):
		return integer(out, 0), false
	case is(name, "INFO"):
		return append(out, r.info[cs.proto-2]...), false
	case is(name, "QUIT"):
		return append(out, "+OK\r\n"...), true
	case is(name, "AUTH"), is(name, "SELECT"), is(name, "CLIENT"), is(name, "READONLY"),
		is(name, "READWRITE"), is(name, "ASKING"), is(name, "FLUSHALL"), is(name, "FLUSHDB"):
		return append(out, "+OK\r\n"...), false
	}
	out = append(out, "-ERR unknown command '"...)
	out = append(out, sanitize(name)...)
	return append(out, "'\r\n"...), false
}

// cluster answers the CLUSTER subcommands that clients use to learn the
// topology.
func (s *server) cluster(out []byte, cs *connState, args [][]byte) []byte {
	r := s.r
	if r.slots[0] == nil {
		return append(out, r.clusterError...)
	}
	if len(args) < 2 {
		return wrongArgs(out, "cluster")
	}
	switch sub := args[1]; {
	case is(sub, "SHARDS"):
		return append(out, r.shards[cs.proto-2]...)
	case is(sub, "SLOTS"):
		return append(out, r.slots[cs.proto-2]...)
	case is(sub, "NODES"):
		return append(out, r.nodes[cs.proto-2]...)
	case is(sub, "INFO"):
		return append(out, r.clusterInfo[cs.proto-2]...)
	case is(sub, "MYID"):
		return append(out, r.myID...)
	}
	out = append(out, "-ERR unknown subcommand '"...)
	out = append(out, sanitize(args[1])...)
	return append(out, "'\r\n"...)
}

func is(arg []byte, upper string) bool { return bytes.EqualFold(arg, []byte(upper)) }

func wrongArgs(out []byte, cmd string) []byte {
	return append(out, "-ERR wrong number of arguments for '"+cmd+"' command\r\n"...)
}

// sanitize keeps an echoed name from breaking the reply line.
func sanitize(b []byte) []byte {
	if len(b) > 64 {
		b = b[:64]
	}
	return bytes.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, b)
}
