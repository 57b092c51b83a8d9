package placement

// Report is the outcome of one comparison. It is a plain value: Run fills it
// in and nothing changes it afterwards. Its JSON form is what "shardis bench
// placement --json" prints.
type Report struct {
	// Keys is the number of keys placed.
	Keys int `json:"keys"`
	// KeySource says where the keys came from, e.g. "100000 keys
	// user:{id}:profile" or a file name.
	KeySource string `json:"key_source"`
	// Strategies and Layouts are what was compared, in report order.
	Strategies []string `json:"strategies"`
	Layouts    []Layout `json:"layouts"`
	// Results holds one entry per strategy and layout, strategy by strategy.
	Results []Result `json:"results"`
	// Method says how each figure was obtained.
	Method Method `json:"method"`
	// Environment describes the machine the lookups were timed on.
	Environment Environment `json:"environment"`
	// Interrupted is set when the context ended before every strategy
	// was measured: Results then holds the ones that were.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Method describes, in words, how the figures of a Report were measured.
type Method struct {
	Balance  string `json:"balance"`
	Movement string `json:"movement"`
	Lookup   string `json:"lookup"`
	Memory   string `json:"memory"`
}

// Environment describes where a comparison ran.
type Environment struct {
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	// Load is the 1-minute load average before and after the run, e.g.
	// "3.10 -> 4.25" (Linux only; empty elsewhere): other work competes
	// with the measurement for the CPUs.
	Load string `json:"load,omitempty"`
}

// Result holds the figures of one strategy on one layout.
type Result struct {
	Strategy string `json:"strategy"`
	Layout   string `json:"layout"`
	Shards   int    `json:"shards"`
	Weighted bool   `json:"weighted"`
	// Skipped, when set, says why the strategy was not measured on this
	// layout ("no weights": it gives every shard an equal share, whatever
	// the weights); the figures are then zero.
	Skipped string `json:"skipped,omitempty"`

	Balance Balance  `json:"balance"`
	Add     Movement `json:"add"`
	Remove  Movement `json:"remove"`
	Lookup  Lookup   `json:"lookup"`
	// MemoryBytes is the heap the routing structure keeps (see
	// Method.Memory).
	MemoryBytes int64 `json:"memory_bytes"`
}

// Balance says how evenly a strategy spreads the keys. Each shard's fair
// share is the number of keys times its weight over the total weight; the
// percentages compare a shard's keys with its fair share (100 is exact).
type Balance struct {
	MinPct    float64 `json:"min_pct"`
	MaxPct    float64 `json:"max_pct"`
	StddevPct float64 `json:"stddev_pct"`
	// Shards lists every shard's keys, in layout order.
	Shards []ShardShare `json:"shards"`
}

// ShardShare is one shard's part of the keys.
type ShardShare struct {
	Label  string `json:"label"`
	Weight int    `json:"weight"`
	Keys   int    `json:"keys"`
	// SharePct is the shard's percentage of all keys; WeightPct its
	// percentage of the total weight, which is what SharePct should be.
	SharePct  float64 `json:"share_pct"`
	WeightPct float64 `json:"weight_pct"`
}

// Movement says how many keys change shard when the layout changes by one
// shard. Shards are matched by label.
type Movement struct {
	// Shard is the label of the shard added or removed.
	Shard string `json:"shard"`
	// MovedPct is the percentage of keys whose shard changed.
	MovedPct float64 `json:"moved_pct"`
	// IdealPct is the least possible: the share of the keys the added
	// shard should get, or the removed shard had the right to.
	IdealPct float64 `json:"ideal_pct"`
	// BetweenSurvivorsPct is the percentage of keys that moved from one
	// shard to another shard when both are in both layouts. A consistent
	// strategy keeps it at 0.
	BetweenSurvivorsPct float64 `json:"between_survivors_pct"`
	// Moved and BetweenSurvivors are the same as key counts.
	Moved            int `json:"moved"`
	BetweenSurvivors int `json:"between_survivors"`
}

// Lookup is the cost of placing one key.
type Lookup struct {
	NsPerOp     float64 `json:"ns_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	// Lookups is how many lookups were timed, over all rounds; the
	// figures above are those of the fastest round.
	Lookups int64 `json:"lookups"`
}

// Result returns the result of strategy on the layout named layout.
func (r *Report) Result(strategy, layout string) (Result, bool) {
	for _, res := range r.Results {
		if res.Strategy == strategy && res.Layout == layout {
			return res, true
		}
	}
	return Result{}, false
}
