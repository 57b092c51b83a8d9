package shard

import "github.com/shardis/shardis/shard/command"

var (
	publishInfo  = command.Lookup("PUBLISH")
	spublishInfo = command.Lookup("SPUBLISH")
)

// publishChannel appends to dst the position of the channel that PUBLISH
// and SPUBLISH are routed by, so that they go where a Subscription listens:
// in ring mode the shard the channel's name hashes to, in cluster mode the
// master of the channel's slot (any node would do for PUBLISH, which the
// cluster broadcasts; the slot's master spreads publishers over the
// masters, and SPUBLISH must go there). Other commands give dst unchanged.
func publishChannel(info *command.Info, args []any, dst []int) []int {
	switch {
	case info == publishInfo && len(args) > 0:
		return append(dst, 0)
	case info == spublishInfo:
		out, err := info.ChannelPositions(args, dst)
		if err != nil {
			return dst
		}
		return out
	}
	return dst
}
