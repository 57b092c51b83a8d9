package redistest

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Deadlines of the cluster waits.
const (
	createTimeout   = 60 * time.Second // joining the nodes into a cluster
	convergeTimeout = 30 * time.Second // until every node agrees
	healthyTimeout  = 30 * time.Second // WaitHealthy without a deadline
	pollInterval    = 50 * time.Millisecond
)

// Cluster is a Redis Cluster of loopback servers, started by StartCluster.
//
// Nodes never changes after StartCluster returns. Which node is a master
// and which a replica can change (failover), so Masters, Replicas,
// MasterOfSlot and ReplicaOf read the topology from the servers each time
// they are called. The methods are safe for concurrent use.
type Cluster struct {
	// Nodes are all the nodes, in start order. StartCluster made the
	// first `masters` of them the masters, owning contiguous slot ranges
	// in that order, and the rest their replicas as redis-cli plans them:
	// the replicas, rotated by one, go to the masters in order, so with 3
	// masters and 1 replica each, Nodes[4], Nodes[5] and Nodes[3]
	// replicate Nodes[0], Nodes[1] and Nodes[2]. Use ReplicaOf rather
	// than counting on this; a failover changes it anyway.
	Nodes []*Server

	byPort map[int]*Server
}

// StartCluster starts masters*(1+replicasPerMaster) cluster nodes with
// opts (Cluster is set for you), joins them the way `redis-cli --cluster
// create --cluster-replicas replicasPerMaster` does (the same slot ranges
// for the masters: 0-5460, 5461-10922 and 10923-16383 for three), but with
// CLUSTER commands sent directly and without its one-second sleeps, and
// waits until every node knows every other one, reports cluster_state:ok,
// sees all 16384 slots covered by the same owners and, when
// replicasPerMaster > 0, lists every replica (synced with its master) in
// CLUSTER SLOTS. Redis needs at least 3 masters. See Cluster.Nodes for
// which node is which. A cluster is ready about 2 s after its nodes
// start: a master that has just started keeps cluster_state:fail for
// 2 s.
//
// Nodes use repl-ping-replica-period 1 and repl-diskless-sync-delay 0
// (every server does) so that replicas show up and resync within about a
// second, and cluster-node-timeout opts.NodeTimeout (default 5000 ms; with
// 1000 ms a replica replaces a killed master within about 2-3 s).
func StartCluster(masters, replicasPerMaster int, opts Options) (*Cluster, error) {
	return StartClusterContext(context.Background(), masters, replicasPerMaster, opts)
}

// StartClusterContext is StartCluster with a context that can cut the
// waits short.
func StartClusterContext(ctx context.Context, masters, replicasPerMaster int, opts Options) (*Cluster, error) {
	if masters < 3 {
		return nil, fmt.Errorf("%w: a Redis Cluster needs at least 3 masters, got %d", ErrInvalid, masters)
	}
	if replicasPerMaster < 0 {
		return nil, fmt.Errorf("%w: replicas per master %d is negative", ErrInvalid, replicasPerMaster)
	}
	n := masters * (1 + replicasPerMaster)
	if n > maxServers {
		return nil, fmt.Errorf("%w: %d nodes is more than %d", ErrInvalid, n, maxServers)
	}
	opts.Cluster = true
	nodes, err := StartNContext(ctx, n, opts)
	if err != nil {
		return nil, err
	}
	c := newCluster(nodes)
	ids, err := c.create(ctx, masters, replicasPerMaster)
	if err != nil {
		return nil, c.fail(err)
	}
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	err = poll(wctx, func(ctx context.Context) error {
		if err := c.check(ctx, replicasPerMaster); err != nil {
			return err
		}
		return c.joined(ctx, ids)
	})
	if err != nil {
		return nil, c.fail(fmt.Errorf("shardis: new cluster did not converge: %w", err))
	}
	return c, nil
}

// fail stops a cluster that could not be set up and returns err with the
// last lines of every node's log appended, since the logs go with the
// directories.
func (c *Cluster) fail(err error) error {
	c.Stop()
	var b strings.Builder
	for _, s := range c.Nodes {
		fmt.Fprintf(&b, "\n--- %s log (last 5 lines) ---\n%s", s.Addr, tail(s.Log(), 5))
	}
	return fmt.Errorf("%w%s", err, b.String())
}

func newCluster(nodes []*Server) *Cluster {
	c := &Cluster{Nodes: nodes, byPort: make(map[int]*Server, len(nodes))}
	for _, s := range nodes {
		c.byPort[s.Port] = s
	}
	return c
}

// Stop stops every node (in parallel) and removes their directories. It
// is idempotent.
func (c *Cluster) Stop() error {
	return stopAll(c.Nodes)
}

// Seeds returns the addresses of all nodes, in the order of Nodes.
func (c *Cluster) Seeds() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.Addr
	}
	return out
}

// WaitHealthy waits until every running node (killed and paused ones are
// left out) reports cluster_state:ok and sees all 16384 slots covered,
// with the same owner for every slot as all the other nodes. Without a
// deadline in ctx it gives up after 30 s. The error wraps ErrTimeout and
// says what was still wrong.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, healthyTimeout)
		defer cancel()
	}
	return c.wait(ctx, -1)
}

// wait polls until check passes or ctx ends.
func (c *Cluster) wait(ctx context.Context, replicas int) error {
	return poll(ctx, func(ctx context.Context) error { return c.check(ctx, replicas) })
}

// check returns nil when the running nodes agree on a healthy cluster,
// or the first problem found. With replicas >= 0, every slot range must
// also list exactly that many replicas.
func (c *Cluster) check(ctx context.Context, replicas int) error {
	var first string
	var firstAddr string
	checked := 0
	for _, s := range c.Nodes {
		if !s.running() {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		sig, err := checkNode(qctx, s, replicas)
		cancel()
		if err != nil {
			return fmt.Errorf("node %s: %w", s.Addr, err)
		}
		if checked == 0 {
			first, firstAddr = sig, s.Addr
		} else if sig != first {
			return fmt.Errorf("node %s and node %s disagree on slot owners", s.Addr, firstAddr)
		}
		checked++
	}
	if checked == 0 {
		return fmt.Errorf("%w: no node is running", ErrNotRunning)
	}
	return nil
}

// checkNode checks one node's CLUSTER INFO and CLUSTER SLOTS and returns
// its slot map rendered as a string, for comparison with other nodes.
func checkNode(ctx context.Context, s *Server, replicas int) (string, error) {
	conn, err := s.dial(ctx)
	if err != nil {
		return "", err
	}
	defer conn.close()
	v, err := conn.do(ctx, "CLUSTER", "INFO")
	if err != nil {
		return "", err
	}
	info, _ := v.(string)
	if state := infoField(info, "cluster_state"); state != "ok" {
		return "", fmt.Errorf("cluster_state:%s", state)
	}
	v, err = conn.do(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return "", err
	}
	ranges, err := parseSlots(v)
	if err != nil {
		return "", err
	}
	if err := covered(ranges); err != nil {
		return "", err
	}
	if replicas >= 0 {
		for _, r := range ranges {
			if len(r.Replicas) != replicas {
				return "", fmt.Errorf("slots %d-%d list %d replicas, want %d", r.Start, r.End, len(r.Replicas), replicas)
			}
		}
	}
	return ownersSignature(ranges), nil
}
