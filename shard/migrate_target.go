package shard

import "strings"

// migrateTarget returns the address an old owner reaches the new owner
// dst at, for MIGRATE. A Sentinel shard's node address is the key of its
// pools (sentinelPrefix + name), not a host:port that a server could connect
// to: its verified master at this moment is the target. Migration.Addrs
// maps either form.
func (c *Client) migrateTarget(m *migState, dst Node) (string, error) {
	addr := dst.Addr
	if a, ok := m.addrs[addr]; ok && a != "" {
		return a, nil
	}
	if c.sent != nil && strings.HasPrefix(addr, sentinelPrefix) {
		for _, sh := range c.sent.shards {
			if sh.key != addr {
				continue
			}
			master, err := sh.resolve()
			if err != nil {
				return "", err
			}
			if a, ok := m.addrs[master]; ok && a != "" {
				return a, nil
			}
			return master, nil
		}
	}
	return addr, nil
}
