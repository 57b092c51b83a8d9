package shard

// autoWaiting is how many commands may wait for a node's writer before
// callers wait to queue theirs: twice a full batch. The queue lives as
// long as the client, idle or not, so it is kept small (8 KiB per node
// instead of the 32 KiB of autoQueue); callers beyond it wait for the
// writer to take a batch, which it does at once.
const autoWaiting = 2 * maxAutoBatch
