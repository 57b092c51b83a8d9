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
//	fakeredis -port 7001[,7002,...] [-cluster 7001,7002,7003] [-value 0123456789abcdef]
//
// It serves every port of -port, each as a node of its own, from one
// process. With -cluster each is the node of that list with its port, and the
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
	"slices"
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
	ports   []int // the ports this process serves
	cluster []int
	self    []int // index of each of ports in cluster
	value   string
}

func parseFlags(argv []string) (config, error) {
	fs := flag.NewFlagSet("fakeredis", flag.ContinueOnError)
	port := fs.String("port", "", "TCP port to listen on, on 127.0.0.1; a comma-separated list serves several nodes from this one process")
	clusterPorts := fs.String("cluster", "", "comma-separated ports of every cluster node, this process's included")
	value := fs.String("value", "0123456789abcdef", "the value GET and MGET return")
	if err := fs.Parse(argv); err != nil {
		return config{}, err
	}
	cfg := config{value: *value}
	var err error
	if cfg.ports, err = parsePorts("-port", *port); err != nil {
		return cfg, err
	}
	if *clusterPorts == "" {
		return cfg, nil
	}
	if cfg.cluster, err = parsePorts("-cluster", *clusterPorts); err != nil {
		return cfg, err
	}
	for _, p := range cfg.ports {
		i := slices.Index(cfg.cluster, p)
		if i < 0 {
			return cfg, fmt.Errorf("-cluster %s does not list port %d", *clusterPorts, p)
		}
		cfg.self = append(cfg.self, i)
	}
	return cfg, nil
}

// parsePorts parses a comma-separated list of distinct ports.
func parsePorts(flagName, list string) ([]int, error) {
	var ports []int
	for f := range strings.SplitSeq(list, ",") {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("%s: port %q is not within 1-65535", flagName, f)
		}
		if slices.Contains(ports, p) {
			return nil, fmt.Errorf("%s: port %d given twice", flagName, p)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

func run(argv []string, stdin io.Reader, stdout io.Writer) error {
	cfg, err := parseFlags(argv)
	if err != nil {
		return err
	}
	if commandTablesErr != nil {
		return commandTablesErr
	}
	topo := newTopology(cfg.cluster)
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	for _, p := range cfg.ports {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			closeAll()
			return err
		}
		lns = append(lns, ln)
	}
	done := make(chan error, len(lns))
	for i, ln := range lns {
		self := 0
		if len(topo) > 0 {
			self = cfg.self[i]
		}
		srv := newServer(newReplies(cfg.value, topo, self))
		go func() { done <- srv.serve(ln) }()
	}
	fmt.Fprintln(stdout, "ready")

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(eof)
	}()
	var serveErr error
	pending := len(lns)
	select {
	case <-stop:
	case <-eof:
	case serveErr = <-done:
		pending--
	}
	closeAll()
	for range pending {
		if err := <-done; serveErr == nil {
			serveErr = err
		}
	}
	if serveErr != nil && !errors.Is(serveErr, net.ErrClosed) {
		return serveErr
	}
	return nil
}
