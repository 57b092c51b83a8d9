package redistest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// slotRanges splits the 16384 slots into masters contiguous ranges the
// way `redis-cli --cluster create` does (in single precision, as it does):
// range i ends at round((i+1)*16384/masters - 1), the last one at 16383.
// For 3 masters they are 0-5460, 5461-10922 and 10923-16383.
func slotRanges(masters int) [][2]int {
	out := make([][2]int, masters)
	per := float32(SlotCount) / float32(masters)
	var cursor float32
	first := 0
	for i := range masters {
		last := int(math.Round(float64(cursor + per - 1)))
		if last > SlotCount-1 || i == masters-1 {
			last = SlotCount - 1
		}
		if last < first {
			last = first
		}
		out[i] = [2]int{first, last}
		first = last + 1
		cursor += per
	}
	return out
}

// masterIndex returns the index in Nodes of the master that node i
// replicates, or -1 when node i is a master. It follows the plan that
// redis-cli prints ("Adding replica ...") before it reshuffles the
// replicas at random: the nodes after the masters, rotated by one (the
// first of them last), go to the masters in order, replicasPerMaster
// each. With 3 masters and 1 replica each, nodes 4, 5 and 3 replicate
// nodes 0, 1 and 2; with 2 replicas each, nodes 4 and 5 replicate node 0,
// 6 and 7 node 1, 8 and 3 node 2.
func masterIndex(i, masters, replicasPerMaster int) int {
	if i < masters || replicasPerMaster <= 0 {
		return -1
	}
	pos := i - masters - 1 // place in the rotated list
	if i == masters {
		pos = masters*replicasPerMaster - 1
	}
	return pos / replicasPerMaster
}

// create joins the nodes into one cluster with the steps of `redis-cli
// --cluster create --cluster-replicas replicasPerMaster`, sent directly
// and without its one-second sleeps: the first masters nodes get the slot
// ranges of slotRanges and every node its own config epoch (1, 2, ... in
// the order of Nodes); then every node meets all the nodes before it
// (redis-cli has them all meet the first and leaves the rest to gossip,
// which takes seconds), and once every node knows every other one, each
// replica is attached to its master (see masterIndex) and every node
// tells the others about itself (see meetAll). redis-cli shuffles
// the replicas among the masters at random when all nodes share one host;
// here the assignment is fixed. create returns the node ids, in the order
// of Nodes.
func (c *Cluster) create(ctx context.Context, masters, replicasPerMaster int) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	ranges := slotRanges(masters)
	ids := make([]string, len(c.Nodes))
	err := c.each(ctx, func(ctx context.Context, i int, conn *respConn) error {
		id, err := clusterCmd(ctx, conn, "CLUSTER", "MYID")
		if err != nil {
			return err
		}
		ids[i] = id
		if i < masters {
			r := ranges[i]
			if err := addSlots(ctx, conn, r[0], r[1]); err != nil {
				return err
			}
		}
		_, err = clusterCmd(ctx, conn, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
		return err
	})
	if err != nil {
		return nil, err
	}
	err = c.each(ctx, func(ctx context.Context, i int, conn *respConn) error {
		for _, o := range c.Nodes[:i] {
			if err := meet(ctx, conn, o); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := poll(ctx, func(ctx context.Context) error { return c.joined(ctx, ids) }); err != nil {
		return nil, fmt.Errorf("shardis: create cluster: nodes did not meet: %w", err)
	}
	err = c.each(ctx, func(ctx context.Context, i int, conn *respConn) error {
		m := masterIndex(i, masters, replicasPerMaster)
		if m < 0 {
			// Nodes learn a master's slots from its pings, which may not
			// come for cluster-node-timeout/2; see meetAll.
			return c.meetAll(ctx, conn, i)
		}
		if _, err := clusterCmd(ctx, conn, "CLUSTER", "REPLICATE", ids[m]); err != nil {
			return err
		}
		return c.announce(ctx, conn, i, c.Nodes[m], replicasPerMaster)
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// announce waits until the replica on conn (node i) has synced with
// master and has a replication offset above zero, then tells every other
// node so at once. Nodes list a replica in CLUSTER SLOTS only once they
// have heard a non-zero offset from it over the cluster bus, and left
// alone that news travels with the periodic pings: the master's
// replication PING (every second) moves the offset off zero, and the
// replica pings each node only every cluster-node-timeout/2. Here a WAIT
// on the master makes it send REPLCONF GETACK down the replication stream
// right away, and meetAll carries the replica's role and offset to every
// node.
func (c *Cluster) announce(ctx context.Context, conn *respConn, i int, master *Server, replicasPerMaster int) error {
	err := poll(ctx, func(ctx context.Context) error {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		v, err := c.Nodes[i].query(qctx, "INFO", "replication")
		if err != nil {
			return err
		}
		info, _ := v.(string)
		if link := infoField(info, "master_link_status"); link != "up" {
			return fmt.Errorf("link to master %s is %q", master.Addr, link)
		}
		if off := infoField(info, "slave_repl_offset"); off == "0" || off == "" {
			// More replicas than the master has, so that WAIT does not
			// return before asking them for an ACK. An error only means
			// the next replication PING, within a second, does it.
			master.query(qctx, "WAIT", strconv.Itoa(replicasPerMaster+1), "1")
			return fmt.Errorf("replication offset is %q", off)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("replica did not sync: %w", err)
	}
	return c.meetAll(ctx, conn, i)
}

// meetAll has node i (on conn) meet every other node again. They know
// each other already, so nothing changes but that each node gets a MEET
// message, whose header carries node i's slots, role, master and
// replication offset, at once instead of with the next ping; the extra
// handshake ends as soon as it is answered.
func (c *Cluster) meetAll(ctx context.Context, conn *respConn, i int) error {
	for j, o := range c.Nodes {
		if j != i {
			if err := meet(ctx, conn, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// meet sends CLUSTER MEET for node o.
func meet(ctx context.Context, conn *respConn, o *Server) error {
	_, err := clusterCmd(ctx, conn, "CLUSTER", "MEET", "127.0.0.1",
		strconv.Itoa(o.Port), strconv.Itoa(o.Port+busPortOffset))
	return err
}

// each runs f on every node at once, each with its own harness
// connection, and returns the errors joined, each naming its node and
// wrapped in "shardis: create cluster".
func (c *Cluster) each(ctx context.Context, f func(ctx context.Context, i int, conn *respConn) error) error {
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, s := range c.Nodes {
		wg.Go(func() {
			conn, err := s.dial(ctx)
			if err == nil {
				err = f(ctx, i, conn)
				conn.close()
			}
			switch {
			case err == nil:
			case ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
				// The connection's deadline is ctx's and can fire first.
				errs[i] = fmt.Errorf("shardis: create cluster: node %s: %w: %w", s.Addr, ErrTimeout, err)
			default:
				errs[i] = fmt.Errorf("shardis: create cluster: node %s: %w", s.Addr, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// clusterCmd runs one command and returns its reply as text. A node
// without cluster support gets an error that says so.
func clusterCmd(ctx context.Context, conn *respConn, args ...string) (string, error) {
	v, err := conn.do(ctx, args...)
	if err != nil {
		var re *ReplyError
		if errors.As(err, &re) && strings.Contains(re.Message, "cluster support disabled") {
			return "", fmt.Errorf("it is not configured as a cluster node (cluster-enabled no): %s: %w", strings.Join(args[:2], " "), err)
		}
		return "", fmt.Errorf("%s: %w", strings.Join(args[:2], " "), err)
	}
	return strings.TrimSpace(formatReply(v)), nil
}

// addSlots assigns the slots lo..hi to the node: CLUSTER ADDSLOTSRANGE,
// or CLUSTER ADDSLOTS with every slot on servers older than Redis 7.0,
// which lack it.
func addSlots(ctx context.Context, conn *respConn, lo, hi int) error {
	_, err := clusterCmd(ctx, conn, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi))
	var re *ReplyError
	if err == nil || !errors.As(err, &re) || !strings.Contains(strings.ToLower(re.Message), "unknown subcommand") {
		return err
	}
	args := make([]string, 0, 2+hi-lo+1)
	args = append(args, "CLUSTER", "ADDSLOTS")
	for s := lo; s <= hi; s++ {
		args = append(args, strconv.Itoa(s))
	}
	_, err = clusterCmd(ctx, conn, args...)
	return err
}

// joined returns nil when every node lists exactly the nodes of ids (by
// id and port), none of them still in a handshake, or the first problem.
func (c *Cluster) joined(ctx context.Context, ids []string) error {
	for _, s := range c.Nodes {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		v, err := s.query(qctx, "CLUSTER", "NODES")
		cancel()
		if err != nil {
			return fmt.Errorf("node %s: %w", s.Addr, err)
		}
		text, _ := v.(string)
		nodes, err := parseNodes(text)
		if err != nil {
			return fmt.Errorf("node %s: %w", s.Addr, err)
		}
		if len(nodes) != len(ids) {
			return fmt.Errorf("node %s knows %d nodes, want %d", s.Addr, len(nodes), len(ids))
		}
		for _, n := range nodes {
			if !n.healthy() {
				return fmt.Errorf("node %s sees %s:%d as %s", s.Addr, n.ID, n.Port, strings.Join(n.Flags, ","))
			}
		}
		for i, o := range c.Nodes {
			found := false
			for _, n := range nodes {
				found = found || (n.ID == ids[i] && n.Port == o.Port)
			}
			if !found {
				return fmt.Errorf("node %s does not know node %s (%s)", s.Addr, o.Addr, ids[i])
			}
		}
	}
	return nil
}

// poll calls check every pollInterval until it returns nil or ctx ends;
// the error then wraps ErrTimeout and the last problem.
func poll(ctx context.Context, check func(context.Context) error) error {
	for {
		problem := check(ctx)
		if problem == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w; last problem: %w", ErrTimeout, ctx.Err(), problem)
		case <-time.After(pollInterval):
		}
	}
}
