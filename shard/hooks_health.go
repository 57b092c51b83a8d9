package shard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// HealthCheck checks one node on a pooled connection; a non-nil error
// counts as a failure of the node (HealthOptions.FailureLimit of them in a
// row mark it down). A check that panics fails with a *PanicError, which
// also goes to Hooks.Panic, and its connection is closed. ctx carries the check's deadline
// (HealthOptions.Timeout); the connection bounds each reply by it when the
// check uses redis.DoContext. A check must leave the connection as it
// found it (no SELECT, no MULTI left open).
type HealthCheck func(ctx context.Context, conn redis.Conn, node Node) error

// CheckPing is the default health check: PING must answer.
func CheckPing(ctx context.Context, conn redis.Conn, _ Node) error {
	_, err := redis.DoContext(conn, ctx, "PING")
	return err
}

// ErrReplicaLinkDown is returned by CheckReplication for a replica whose
// link to its master is down.
var ErrReplicaLinkDown = errors.New("shardis: replica's link to its master is down")

// CheckReplication is a health check that reads INFO replication instead
// of sending PING: a master is healthy when it answers; a replica only
// while its link to its master is up (master_link_status:up), so that a
// replica that lost its master, or has not finished its first sync, stops
// serving reads. The error wraps ErrReplicaLinkDown.
func CheckReplication(ctx context.Context, conn redis.Conn, node Node) error {
	info, err := redis.String(redis.DoContext(conn, ctx, "INFO", "replication"))
	if err != nil {
		return err
	}
	if infoValue(info, "role") != "slave" {
		return nil
	}
	if link := infoValue(info, "master_link_status"); link != "up" {
		return fmt.Errorf("%w: %s (master_link_status:%s)", ErrReplicaLinkDown, node.Addr, link)
	}
	return nil
}

// infoValue returns the value of field in an INFO reply.
func infoValue(info, field string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// healthCheck runs the configured check (PING by default) within t.
func (c *Client) healthCheck(ctx context.Context, conn redis.Conn, ns *nodeState, t time.Duration) error {
	if c.health.Check == nil {
		_, err := redis.DoContext(conn, ctx, "PING") // a cancelled ctx closes conn
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	err := callUserCheck(c, c.health.Check, ctx, conn, ns.node)
	if perr, ok := err.(*PanicError); ok {
		c.reportPanic(perr)
	}
	return err
}
