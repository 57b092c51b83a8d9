package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// Do runs one command on the server, logged in with the harness account
// and over TLS when the server uses it, and returns the reply rendered as
// redis-cli prints it when its output is not a terminal: strings and
// integers as they are, nil as an empty line, arrays one element per line;
// the result is trimmed. An error reply is returned as a *ReplyError.
// It waits at most 10 s. Do is for test harnesses; clients under test
// should use their own connections.
//
// Do speaks RESP itself instead of running redis-cli, because redis-cli
// 7.0 exits with status 0 and prints error replies just like values.
func (s *Server) Do(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), doTimeout)
	defer cancel()
	return s.DoContext(ctx, args...)
}

// DoContext is Do with a caller-provided context instead of the 10 s limit.
func (s *Server) DoContext(ctx context.Context, args ...string) (string, error) {
	v, err := s.query(ctx, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(formatReply(v)), nil
}

// query runs one command on a fresh harness connection and returns the
// raw reply.
func (s *Server) query(ctx context.Context, args ...string) (any, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: no command given", ErrInvalid)
	}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return c.do(ctx, args...)
}

// CLI runs redis-cli against the server with the connection, TLS and
// login flags already set, followed by args (a command, or options such
// as "--cluster", "check", s.Addr), and returns its trimmed output
// (stdout and stderr together). It fails when redis-cli exits with a
// non-zero status or ctx ends. The password reaches redis-cli through its
// environment, never its command line.
func (s *Server) CLI(ctx context.Context, args ...string) (string, error) {
	cmd := s.cliCommand(ctx, args...)
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
		}
		return text, fmt.Errorf("shardis: redis-cli %s: %w; output:\n%s", strings.Join(args, " "), err, tail(text, 20))
	}
	return text, nil
}

func (s *Server) cliCommand(ctx context.Context, args ...string) *exec.Cmd {
	flags := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port)}
	if s.TLS != nil {
		flags = append(flags, "--tls", "--cacert", s.TLS.CAFile,
			"--cert", s.TLS.ClientCertFile, "--key", s.TLS.ClientKeyFile)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "REDISCLI_AUTH=")
	})
	if user, pass, ok := s.opts.credentials(); ok {
		if user != "" {
			flags = append(flags, "--user", user)
		}
		env = append(env, "REDISCLI_AUTH="+pass)
	}
	cmd := exec.CommandContext(ctx, cliBin, append(flags, args...)...)
	cmd.Env = env
	cmd.Dir = s.Dir
	return cmd
}
