package shard

// String describes the client by its configuration (Config.String: every
// default filled in, passwords shown as ***). It exists so that printing a
// *Client with any verb never shows a password, which fmt would otherwise
// print from the client's unexported fields.
func (c *Client) String() string {
	if c == nil {
		return "shard.Client(nil)"
	}
	return "shard.Client{" + c.cfg.String() + "}"
}

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }
