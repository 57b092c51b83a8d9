// Command fakeredis is a tiny RESP server for client benchmarks: it
// answers SET with +OK, GET with a fixed value and MGET with that value
// for every key, and tells a client just enough about itself (HELLO,
// COMMAND as redis-server 7.0.15 describes the commands served here,
// CLUSTER SHARDS, SLOTS and NODES for a simulated cluster of masters) to
// be used as a standalone server or a cluster node. It keeps no data:
// every reply is pre-encoded, so that a command costs it far less CPU
// than redis-server and a benchmark measures the client.
//
// Usage:
//
//	fakeredis -port 7001 [-cluster 7001,7002,7003] [-value 0123456789abcdef]
//
// With -cluster it is the node of that list whose port is -port, and the
// listed ports (all on 127.0.0.1) own the 16,384 slots in equal ranges,
// in order. It prints "ready" on standard output once it listens, and
// exits when standard input reaches its end (so that it never outlives
// the benchmark that started it) or on SIGINT/SIGTERM.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fakeredis:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	port    int
	cluster []int
	self    int // index of port in cluster
	value   string
}

func parseFlags(argv []string) (config, error) {
	fs := flag.NewFlagSet("fakeredis", flag.ContinueOnError)
	port := fs.Int("port", 0, "TCP port to listen on, on 127.0.0.1")
	clusterPorts := fs.String("cluster", "", "comma-separated ports of every cluster node, this one included")
	value := fs.String("value", "0123456789abcdef", "the value GET and MGET return")
	if err := fs.Parse(argv); err != nil {
		return config{}, err
	}
	cfg := config{port: *port, value: *value, self: -1}
	if cfg.port <= 0 || cfg.port > 65535 {
		return cfg, fmt.Errorf("-port %d is not within 1-65535", cfg.port)
	}
	if *clusterPorts == "" {
		return cfg, nil
	}
	for i, f := range strings.Split(*clusterPorts, ",") {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 || p > 65535 {
			return cfg, fmt.Errorf("-cluster: bad port %q", f)
		}
		if p == cfg.port {
			cfg.self = i
		}
		cfg.cluster = append(cfg.cluster, p)
	}
	if cfg.self < 0 {
		return cfg, fmt.Errorf("-cluster %s does not list -port %d", *clusterPorts, cfg.port)
	}
	return cfg, nil
}

func run(argv []string, stdin io.Reader, stdout io.Writer) error {
	cfg, err := parseFlags(argv)
	if err != nil {
		return err
	}
	if commandTablesErr != nil {
		return commandTablesErr
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.port)))
	if err != nil {
		return err
	}
	srv := newServer(newReplies(cfg.value, newTopology(cfg.cluster), max(cfg.self, 0)))
	done := make(chan error, 1)
	go func() { done <- srv.serve(ln) }()
	fmt.Fprintln(stdout, "ready")

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-stop:
	case <-eof:
	case err := <-done:
		return err
	}
	ln.Close()
	if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
