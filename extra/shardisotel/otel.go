package shardisotel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/shardis/shardis/extra/shardisotel"

// DefaultStatementLimit bounds db.query.text when WithStatements is given
// no positive limit.
const DefaultStatementLimit = 2048

// OtherOperation is the db.operation.name, and the span name, of a
// command the client cannot vouch for (shard.OtherOperation: a name that
// is neither in the command table, nor learned from the servers, nor
// shaped like a module's command such as FT.SEARCH, or a module-shaped
// name past shard.MaxModuleOperations). The name a caller passes to Do is
// not trusted as an attribute value, so that the metric series and span
// names stay bounded whatever the callers send.
const OtherOperation = shard.OtherOperation

// Attribute keys of this package (the others are OpenTelemetry's
// semantic conventions).
const (
	// OutcomeKey is the outcome class of a command attempt or operation
	// (shard.Outcome.String: "ok", "server_error", "redirect", ...).
	OutcomeKey = attribute.Key("shardis.outcome")
	// RedirectKindKey is "MOVED", "ASK" or "TRYAGAIN".
	RedirectKindKey = attribute.Key("shardis.redirect.kind")
	// RedirectSlotKey is the hash slot of a redirect.
	RedirectSlotKey = attribute.Key("shardis.redirect.slot")
	// RedirectFromKey and RedirectToKey are the nodes (host:port) a
	// redirect came from and sent the command to.
	RedirectFromKey = attribute.Key("shardis.redirect.from")
	RedirectToKey   = attribute.Key("shardis.redirect.to")
	// NodesKey is how many nodes gave the final replies of an operation
	// that ended on several.
	NodesKey = attribute.Key("shardis.nodes")
	// AttemptsKey is how many times an operation's command was sent
	// (shard.Op.Attempts: for several commands, the most times one was),
	// set when it is more than once: a redirect or a retry.
	AttemptsKey = attribute.Key("shardis.attempts")
	// NodeKey names the shard that served a command, beside its
	// server.address and server.port, when the shard has a name of its
	// own (shard.Node.Name, not its address): a ring shard's name, which
	// places its keys, and a Sentinel shard's (shard.Node.Addr
	// "sentinel/<name>"), whose server.address and server.port are its
	// master's at the time (shard.CommandEvent.ServerAddr). Cluster
	// nodes, named by their address, have none.
	NodeKey = attribute.Key("shardis.node")
	// ReadOnlyKey marks a replica connection for reads (READONLY).
	ReadOnlyKey = attribute.Key("shardis.node.read_only")
	// NodeEventKey is a node state change (shard.NodeEventKind.String).
	NodeEventKey = attribute.Key("shardis.node.event")
	// ResultKey is "ok" or "error" for a topology refresh.
	ResultKey = attribute.Key("shardis.result")
	// ChangedKey says whether a refresh changed the slot map.
	ChangedKey = attribute.Key("shardis.changed")
	// MigrationFromKey and MigrationToKey are the TopologyID of each side
	// of a migration (shard.MigrationInfo.FromID, ToID).
	MigrationFromKey = attribute.Key("shardis.migration.from")
	MigrationToKey   = attribute.Key("shardis.migration.to")
	// MigrationStepKey is what a migrating client did: "move" (a MIGRATE
	// that moved keys), "overwrite" (a blind overwrite, no MIGRATE),
	// "old_read" (a read answered at the old owner), "busy_key" (an old
	// copy deleted, the new owner had the key), "failure" (a move or
	// delete that failed).
	MigrationStepKey = attribute.Key("shardis.migration.step")
)

// config is what the options set.
type config struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	statements int // 0: off
	attrs      []attribute.KeyValue
}

// Option configures an Instrumentation.
type Option func(*config)

// WithTracerProvider sets the tracer provider; the default is the global
// one (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets the meter provider; the default is the global one
// (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithStatements records each command with its arguments as db.query.text,
// at most maxBytes bytes (DefaultStatementLimit when maxBytes <= 0), with
// passwords replaced by "?". Off by default: arguments may hold personal
// data, and large values would bloat the spans.
func WithStatements(maxBytes int) Option {
	return func(c *config) {
		if maxBytes <= 0 {
			maxBytes = DefaultStatementLimit
		}
		c.statements = maxBytes
	}
}

// WithAttributes adds attributes to every span and every measurement (a
// client name, say). Keep their values few: each one is a metric series.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, attrs...) }
}

// Instrumentation traces and measures one or more shardis clients. Create
// it with New, put Hooks in shard.Config.Hooks (or call Instrument), and
// call Observe with each client for the pool and node gauges.
type Instrumentation struct {
	cfg       config
	tracer    trace.Tracer
	meter     metric.Meter
	noTraces  bool // the tracer provider is the API's no-op one
	noMetrics bool // the meter provider is the API's no-op one

	opDuration   metric.Float64Histogram
	dialDuration metric.Float64Histogram
	redirects    metric.Int64Counter
	retries      metric.Int64Counter
	refreshes    metric.Int64Counter
	nodeEvents   metric.Int64Counter

	nodes         sync.Map // addr -> *nodeAttrs
	opAttrs       sync.Map // opKey -> metric.RecordOption
	opAttrCount   atomic.Int64
	spanAttrs     sync.Map // command name -> trace.SpanStartOption
	spanAttrCount atomic.Int64
}

// nodeAttrs are a node's attributes, parsed once.
type nodeAttrs struct {
	name string               // shard.Node.Name
	kv   []attribute.KeyValue // server.address, server.port (and shardis.node)
}

// attrs returns the node's attributes, for appending to.
func (na *nodeAttrs) attrs() []attribute.KeyValue { return na.kv[:len(na.kv):len(na.kv)] }

type opKey struct {
	addr, name string     // name: the operation name (shard.CommandEvent.Operation)
	node       *nodeAttrs // the node's attributes: a renamed node has new ones
	outcome    shard.Outcome
	errType    string // error.type: the outcome's name, or a retry's cause (retryCause)
}

// maxOpAttrSets bounds the cached attribute sets of the duration
// histogram (node × command × outcome).
const maxOpAttrSets = 1 << 14

// New creates an Instrumentation and its instruments.
func New(opts ...Option) (*Instrumentation, error) {
	in := &Instrumentation{}
	for _, o := range opts {
		o(&in.cfg)
	}
	if in.cfg.tp == nil {
		in.cfg.tp = otel.GetTracerProvider()
	}
	if in.cfg.mp == nil {
		in.cfg.mp = otel.GetMeterProvider()
	}
	in.tracer = in.cfg.tp.Tracer(ScopeName)
	in.meter = in.cfg.mp.Meter(ScopeName)
	// The API's no-op providers record nothing: their hooks are left out,
	// so that an instrumented client with them costs what one without
	// hooks costs.
	_, in.noTraces = in.cfg.tp.(tracenoop.TracerProvider)
	_, in.noMetrics = in.cfg.mp.(metricnoop.MeterProvider)
	var err, e error
	in.opDuration, e = in.meter.Float64Histogram("db.client.operation.duration",
		metric.WithDescription("Duration of each command or pipeline part on one node, per attempt."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	err = errors.Join(err, e)
	in.dialDuration, e = in.meter.Float64Histogram("db.client.connection.create_time",
		metric.WithDescription("Time to open a connection (connect, TLS, setup commands)."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
	err = errors.Join(err, e)
	in.redirects, e = in.meter.Int64Counter("shardis.client.redirects",
		metric.WithDescription("MOVED, ASK and TRYAGAIN replies followed, by the node that sent them."),
		metric.WithUnit("{redirect}"))
	err = errors.Join(err, e)
	in.retries, e = in.meter.Int64Counter("shardis.client.retries",
		metric.WithDescription("Command attempts that failed in a way the client retries (refused connection, node down, CLUSTERDOWN, LOADING, ...), by node."),
		metric.WithUnit("{attempt}"))
	err = errors.Join(err, e)
	in.refreshes, e = in.meter.Int64Counter("shardis.client.topology.refreshes",
		metric.WithDescription("Cluster topology refreshes."),
		metric.WithUnit("{refresh}"))
	err = errors.Join(err, e)
	in.nodeEvents, e = in.meter.Int64Counter("shardis.client.node.events",
		metric.WithDescription("Node state changes: down, up, ejected, restored, replica_promoted."),
		metric.WithUnit("{event}"))
	err = errors.Join(err, e)
	if err != nil {
		return nil, fmt.Errorf("shardis: otel instruments: %w", err)
	}
	return in, nil
}

// Instrument creates an Instrumentation and adds its hooks to cfg's
// (shard.JoinHooks), for a client created from cfg next.
func Instrument(cfg *shard.Config, opts ...Option) (*Instrumentation, error) {
	in, err := New(opts...)
	if err != nil {
		return nil, err
	}
	cfg.Hooks = shard.JoinHooks(cfg.Hooks, in.Hooks())
	return in, nil
}

// Hooks returns the hooks that make the spans and measurements. With the
// API's no-op providers (go.opentelemetry.io/otel/trace/noop,
// go.opentelemetry.io/otel/metric/noop) the hooks they would feed are
// left out; with both, Hooks returns nil.
func (in *Instrumentation) Hooks() *shard.Hooks {
	h := &shard.Hooks{}
	if !in.noTraces {
		h.Start, h.Finish = in.start, in.finish
	}
	if !in.noTraces || !in.noMetrics {
		// NodeState also forgets the nodes the client retires.
		h.Command, h.Pipeline, h.NodeState = in.command, in.pipeline, in.nodeState
	}
	if !in.noMetrics {
		h.Dial, h.Refresh = in.dial, in.refresh
	}
	if in.noTraces && in.noMetrics {
		return nil
	}
	return h
}

// node returns the attributes of the node at addr.
func (in *Instrumentation) node(addr string) *nodeAttrs {
	na, _ := in.nodeAt(shard.Node{Addr: addr}, "")
	return na
}

// nodeAt returns the attributes of node n, whose server is at server
// (shard.CommandEvent.ServerAddr; "" or n.Addr: n's own address), and
// the key they are cached under (forget drops it with n's). A Sentinel
// shard's server is its master: server.address and server.port are the
// master's, and NodeKey names the shard; so it does a ring shard whose
// name is not its address. The cached attributes follow a renamed node
// (a migration's topology that names a server anew).
func (in *Instrumentation) nodeAt(n shard.Node, server string) (*nodeAttrs, string) {
	key := n.Addr
	if server != "" && server != n.Addr {
		key = n.Addr + "\x00" + server
	} else {
		server = n.Addr
	}
	if v, ok := in.nodes.Load(key); ok {
		if na := v.(*nodeAttrs); na.name == n.Name {
			return na, key
		}
	}
	na := &nodeAttrs{name: n.Name}
	host, port := server, 0
	if h, p, err := net.SplitHostPort(server); err == nil {
		host = h
		port, _ = strconv.Atoi(p)
	}
	na.kv = []attribute.KeyValue{semconv.ServerAddress(host), semconv.ServerPort(port)}
	if key != n.Addr || n.Name != "" && n.Name != n.Addr {
		na.kv = append(na.kv, NodeKey.String(n.Name))
	}
	for {
		v, loaded := in.nodes.LoadOrStore(key, na)
		if !loaded {
			return na, key
		}
		cur := v.(*nodeAttrs)
		if cur.name == n.Name {
			return cur, key
		}
		if in.nodes.CompareAndSwap(key, cur, na) {
			return na, key
		}
	}
}

func (in *Instrumentation) start(ctx context.Context, op *shard.Op) context.Context {
	name := op.Operation()
	if !op.Pipeline && in.cfg.statements == 0 {
		// The common case: the span's attributes depend on the command's
		// name only, and are given at the start (cheaper than adding them).
		ctx, _ = in.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), in.startAttrs(name))
		return ctx
	}
	ctx, span := in.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx
	}
	if op.Pipeline {
		ctx = context.WithValue(ctx, batchKey{}, true)
	}
	attrs := make([]attribute.KeyValue, 0, 5+len(in.cfg.attrs))
	attrs = append(attrs, semconv.DBSystemNameRedis, semconv.DBOperationName(name))
	if op.Pipeline {
		attrs = append(attrs, semconv.DBOperationBatchSize(op.Commands))
	}
	if in.cfg.statements > 0 {
		attrs = append(attrs, semconv.DBQueryText(op.Statement(in.cfg.statements)))
	}
	attrs = append(attrs, in.cfg.attrs...)
	span.SetAttributes(attrs...)
	return ctx
}

// startAttrs returns the cached start option of a command's spans.
func (in *Instrumentation) startAttrs(name string) trace.SpanStartOption {
	if v, ok := in.spanAttrs.Load(name); ok {
		return v.(trace.SpanStartOption)
	}
	attrs := append([]attribute.KeyValue{semconv.DBSystemNameRedis, semconv.DBOperationName(name)}, in.cfg.attrs...)
	opt := trace.WithAttributes(attrs...)
	if in.spanAttrCount.Add(1) <= maxOpAttrSets {
		in.spanAttrs.Store(name, opt)
	}
	return opt
}

func (in *Instrumentation) finish(ctx context.Context, op *shard.Op) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		span.End()
		return
	}
	if op.Nodes == 1 {
		na, _ := in.nodeAt(op.Node, op.ServerAddr)
		span.SetAttributes(na.kv...)
	} else if op.Nodes > 1 {
		span.SetAttributes(NodesKey.Int(op.Nodes))
	}
	if op.Attempts > 1 {
		span.SetAttributes(AttemptsKey.Int(op.Attempts))
	}
	if in.cfg.statements > 0 && !op.Pipeline && op.Name == "MULTI" {
		// A Client.Tx: its statement was its WATCH when it started; its
		// MULTI ... EXEC is known now.
		span.SetAttributes(semconv.DBQueryText(op.Statement(in.cfg.statements)))
	}
	if op.Err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(op.Outcome, op.Err)), OutcomeKey.String(op.Outcome.String()))
		if code := statusCode(op.Err); code != "" {
			span.SetAttributes(semconv.DBResponseStatusCode(code))
		}
		// The error's text may quote keys or arguments (a server's
		// "unknown command ... with args beginning with:", a
		// CrossShardError's keys): the status says only its class.
		span.SetStatus(codes.Error, errorType(op.Outcome, op.Err))
	}
	span.End()
}

func (in *Instrumentation) command(ctx context.Context, ev *shard.CommandEvent) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		switch {
		case ev.Part() || ctx.Value(batchKey{}) != nil:
			// One node's share of a pipeline or of a split command: a
			// span of its own, as a PipelineEvent's, so that every node
			// the operation reached is named.
			var rd []shard.Redirect
			if ev.Outcome == shard.OutcomeRedirect {
				rd = []shard.Redirect{ev.Redirect}
			}
			fail, err := ev.Outcome, ev.Err
			if fail == shard.OutcomeRedirect {
				fail, err = shard.OutcomeOK, nil
			}
			in.partSpan(ctx, partOf{node: ev.Node, server: ev.ServerAddr, operation: ev.Operation(), commands: 1,
				start: ev.Start, duration: ev.Duration, statement: ev.Statement, redirects: rd, fail: fail, err: err})
		case ev.Outcome != shard.OutcomeOK:
			in.attemptEvent(span, ev.Node, ev.ServerAddr, ev.Outcome, ev.Err, &ev.Redirect)
		}
	}
	retries := 0
	if ev.Outcome == shard.OutcomeRetry {
		retries = 1
	}
	in.measure(ctx, ev.Node, ev.ServerAddr, ev.Operation(), ev.Outcome, ev.Duration.Seconds(), ev.Err, retries, &ev.Redirect)
}

// batchKey marks the context of a pipeline's operation (start), whose
// commands that went alone to their node have a span each (command).
type batchKey struct{}

// partOf is one node's share of an operation spread over several nodes:
// a PipelineEvent, or a CommandEvent of a pipeline or a split command.
type partOf struct {
	node      shard.Node
	server    string // shard.CommandEvent.ServerAddr
	operation string
	commands  int
	start     time.Time
	duration  time.Duration
	statement func(max int) string
	redirects []shard.Redirect
	fail      shard.Outcome // partFailure's
	err       error
}

// partSpan records p as a child span of the operation's, named after
// the operation and the node's server.
func (in *Instrumentation) partSpan(ctx context.Context, p partOf) {
	na, _ := in.nodeAt(p.node, p.server)
	target := p.node.Addr
	if p.server != "" {
		target = p.server // a Sentinel shard's master
	}
	_, span := in.tracer.Start(ctx, p.operation+" "+target, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(p.start))
	attrs := make([]attribute.KeyValue, 0, 6+len(in.cfg.attrs))
	attrs = append(attrs, semconv.DBSystemNameRedis, semconv.DBOperationName(p.operation), semconv.DBOperationBatchSize(p.commands))
	attrs = append(attrs, na.kv...)
	if in.cfg.statements > 0 {
		attrs = append(attrs, semconv.DBQueryText(p.statement(in.cfg.statements)))
	}
	attrs = append(attrs, in.cfg.attrs...)
	span.SetAttributes(attrs...)
	for i := range p.redirects {
		in.attemptEvent(span, p.node, p.server, shard.OutcomeRedirect, nil, &p.redirects[i])
	}
	if p.fail != shard.OutcomeOK {
		in.attemptEvent(span, p.node, p.server, p.fail, p.err, nil)
		et := errorType(p.fail, p.err)
		span.SetAttributes(semconv.ErrorTypeKey.String(et))
		// As the operation's span: status Error with the class only,
		// since the error's text may quote arguments.
		span.SetStatus(codes.Error, et)
	}
	span.End(trace.WithTimestamp(p.start.Add(p.duration)))
}

func (in *Instrumentation) pipeline(ctx context.Context, ev *shard.PipelineEvent) {
	if trace.SpanFromContext(ctx).IsRecording() {
		fail, err := partFailure(ev)
		in.partSpan(ctx, partOf{node: ev.Node, server: ev.ServerAddr, operation: ev.Operation(), commands: ev.Commands,
			start: ev.Start, duration: ev.Duration, statement: ev.Statement, redirects: ev.Redirects, fail: fail, err: err})
	}
	// The part's outcome is its failure's, as on its span; a redirect
	// when its commands only succeeded or were redirected.
	o, _ := partFailure(ev)
	if o == shard.OutcomeOK {
		o = ev.Outcome
	}
	in.measure(ctx, ev.Node, ev.ServerAddr, ev.Operation(), o, ev.Duration.Seconds(), ev.Err, ev.Outcomes[shard.OutcomeRetry], nil)
	for i := range ev.Redirects {
		in.countRedirect(ctx, &ev.Redirects[i])
	}
}

// partFailure returns how a node's part of a batch failed: the outcome of
// its first command that neither succeeded nor was redirected, and that
// command's error when the event has it (ev.Err is the first command's
// that did not succeed, which may be a redirect's); OutcomeOK when every
// command succeeded or was redirected.
func partFailure(ev *shard.PipelineEvent) (shard.Outcome, error) {
	if ev.Outcome != shard.OutcomeRedirect {
		return ev.Outcome, ev.Err
	}
	for o, n := range ev.Outcomes {
		if n > 0 && shard.Outcome(o) != shard.OutcomeOK && shard.Outcome(o) != shard.OutcomeRedirect {
			return shard.Outcome(o), nil
		}
	}
	return shard.OutcomeOK, nil
}

// attemptEvent adds a span event for an attempt that did not succeed: a
// redirect names both nodes.
func (in *Instrumentation) attemptEvent(span trace.Span, node shard.Node, server string, o shard.Outcome, err error, rd *shard.Redirect) {
	if o == shard.OutcomeRedirect && rd != nil {
		span.AddEvent("redirect", trace.WithAttributes(
			RedirectKindKey.String(rd.Kind), RedirectSlotKey.Int(rd.Slot),
			RedirectFromKey.String(rd.From.Addr), RedirectToKey.String(rd.To.Addr)))
		return
	}
	na, _ := in.nodeAt(node, server)
	attrs := append(na.attrs(), OutcomeKey.String(o.String()), semconv.ErrorTypeKey.String(errorType(o, err)))
	span.AddEvent("attempt failed", trace.WithAttributes(attrs...))
}

// measure records an attempt's duration under the operation name
// (shard.CommandEvent.Operation, or shard.PipelineEvent.Operation) and counts its redirect or
// retries.
func (in *Instrumentation) measure(ctx context.Context, node shard.Node, server, name string, o shard.Outcome, seconds float64, err error, retries int, rd *shard.Redirect) {
	na, key := in.nodeAt(node, server)
	if in.opDuration.Enabled(ctx) {
		in.opDuration.Record(ctx, seconds, in.opOption(na, key, name, o, err))
	}
	if o == shard.OutcomeRedirect && rd != nil {
		in.countRedirect(ctx, rd)
	}
	if retries > 0 && in.retries.Enabled(ctx) {
		in.retries.Add(ctx, int64(retries), metric.WithAttributes(in.withCommon(na.attrs())...))
	}
}

func (in *Instrumentation) countRedirect(ctx context.Context, rd *shard.Redirect) {
	if !in.redirects.Enabled(ctx) {
		return
	}
	attrs := append(in.node(rd.From.Addr).attrs(), RedirectKindKey.String(rd.Kind))
	in.redirects.Add(ctx, 1, metric.WithAttributes(in.withCommon(attrs)...))
}

// opOption returns the cached attributes of a duration measurement. Its
// error.type is the outcome class, but for a retried attempt, or a
// failure that stands, its cause (retryCause, failureCause: a few known
// values, so the series stay bounded); a server's error code is not used
// here, since a script may make up any.
func (in *Instrumentation) opOption(na *nodeAttrs, key, name string, o shard.Outcome, err error) metric.RecordOption {
	k := opKey{addr: key, name: name, node: na, outcome: o}
	switch o {
	case shard.OutcomeOK:
	case shard.OutcomeRetry:
		k.errType = retryCause(err)
	case shard.OutcomeFailed:
		k.errType = failureCause(err)
	default:
		k.errType = o.String()
	}
	if v, ok := in.opAttrs.Load(k); ok {
		return v.(metric.RecordOption)
	}
	attrs := append(na.attrs(), semconv.DBSystemNameRedis, semconv.DBOperationName(name), OutcomeKey.String(o.String()))
	if o != shard.OutcomeOK {
		attrs = append(attrs, semconv.ErrorTypeKey.String(k.errType))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(in.withCommon(attrs)...))
	if in.opAttrCount.Load() < maxOpAttrSets {
		if _, loaded := in.opAttrs.LoadOrStore(k, opt); !loaded {
			in.opAttrCount.Add(1)
		}
	}
	return opt
}

// forget drops what is cached for the node at addr, which the client
// retired (shard.NodeRetired): the caches hold the nodes in use, not
// every node ever seen.
func (in *Instrumentation) forget(addr string) {
	mine := func(key string) bool { return key == addr || strings.HasPrefix(key, addr+"\x00") }
	in.nodes.Range(func(k, _ any) bool {
		if mine(k.(string)) {
			in.nodes.Delete(k)
		}
		return true
	})
	in.opAttrs.Range(func(k, _ any) bool {
		if mine(k.(opKey).addr) {
			if _, deleted := in.opAttrs.LoadAndDelete(k); deleted {
				in.opAttrCount.Add(-1)
			}
		}
		return true
	})
}

func (in *Instrumentation) withCommon(attrs []attribute.KeyValue) []attribute.KeyValue {
	if len(in.cfg.attrs) == 0 {
		return attrs
	}
	return append(attrs, in.cfg.attrs...)
}

func (in *Instrumentation) dial(ctx context.Context, ev *shard.DialEvent) {
	if !in.dialDuration.Enabled(ctx) {
		return
	}
	attrs := []attribute.KeyValue{semconv.DBClientConnectionPoolName(ev.Node.Addr), ReadOnlyKey.Bool(ev.ReadOnly)}
	if ev.Err != nil {
		attrs = append(attrs, semconv.ErrorTypeKey.String(dialErrorType(ev.Err)))
	}
	in.dialDuration.Record(ctx, ev.Duration.Seconds(), metric.WithAttributes(in.withCommon(attrs)...))
}

func (in *Instrumentation) refresh(ctx context.Context, ev *shard.RefreshEvent) {
	result := "ok"
	if ev.Err != nil {
		result = "error"
	}
	in.refreshes.Add(ctx, 1, metric.WithAttributes(in.withCommon([]attribute.KeyValue{ResultKey.String(result), ChangedKey.Bool(ev.Changed)})...))
}

func (in *Instrumentation) nodeState(ev shard.NodeEvent) {
	if !in.noMetrics {
		// A Sentinel shard's event names its master (ServerAddr), as
		// its commands' measurements do.
		na, _ := in.nodeAt(ev.Node, ev.ServerAddr)
		attrs := append(na.attrs(), NodeEventKey.String(ev.Kind.String()))
		in.nodeEvents.Add(context.Background(), 1, metric.WithAttributes(in.withCommon(attrs)...))
	}
	if ev.Kind == shard.NodeRetired && ev.AddressLeft {
		in.forget(ev.Node.Addr)
	}
}

// errorType is the error.type of a failed attempt or operation: the
// server's error code for an error reply (WRONGTYPE, NOAUTH, ...), the
// cause of a retried attempt or of an operation that gave up retrying
// (retryCause) or of a failure that stands (failureCause), else the
// outcome class (a script's error reply without a code included).
func errorType(o shard.Outcome, err error) string {
	switch o {
	case shard.OutcomeServerError:
		if code := statusCode(err); code != "" {
			return code
		}
	case shard.OutcomeRetry:
		return retryCause(err)
	case shard.OutcomeFailed:
		return failureCause(err)
	}
	return o.String()
}

// failureCause is the error.type of an attempt or operation that failed
// for good without a reply (shard.OutcomeFailed): as retryCause says it,
// "node_down", the dial's error.type, "timeout" or "io", so that a node
// marked down, a refused connection and a broken one are told apart (in
// ring mode the client does not retry them); "failed" when err says
// nothing more (a command refused before it was sent, a closed client
// that cut a command off).
func failureCause(err error) string {
	if errors.Is(err, shard.ErrClosed) {
		return shard.OutcomeFailed.String()
	}
	if c := connCause(err); c != "" {
		return c
	}
	return shard.OutcomeFailed.String()
}

// retryCause is the error.type of an attempt the client retries, or of
// an operation that gave up retrying (a *shard.RetryError wraps its last
// failure): the server's reply that made it wait or go elsewhere
// (CLUSTERDOWN, LOADING, MASTERDOWN, READONLY, TRYAGAIN, MOVED, ASK),
// else the cause of the node's or connection's failure (connCause), and
// "retry" when err says nothing more. The values are few: fit for a
// metric's attribute.
func retryCause(err error) string {
	var re redis.Error
	if errors.As(err, &re) {
		switch code := shard.ErrorCause(re); code {
		case "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY", "TRYAGAIN", "MOVED", "ASK":
			return code
		}
	}
	if c := connCause(err); c != "" {
		return c
	}
	return shard.OutcomeRetry.String()
}

// connCause is the cause of a failure of the node or of its connection,
// as shard.ErrorCause names it: "node_down" for a node marked down, the
// dial's error.type (see dialErrorType) for a connection that could not
// be opened, "timeout" for a read that timed out, "io" for another
// failure of the connection; "" for anything else.
func connCause(err error) string {
	switch c := shard.ErrorCause(err); c {
	case shard.CauseNodeDown, shard.CauseAuth, shard.CauseDial, shard.CauseTimeout, shard.CauseCanceled, shard.CauseIO:
		return c
	}
	return ""
}

// statusCode returns the error code of a server error reply: its first
// word when that is shaped like a code (ERR, WRONGTYPE, a module's
// MYMOD_ERR), "" otherwise. A script's error reply (redis.error_reply,
// {err=...}) is the script's own text, whose first word may be a key, a
// value or a secret: it must not become an attribute, which would also
// make error.type unbounded.
func statusCode(err error) string {
	var re redis.Error
	if !errors.As(err, &re) {
		return ""
	}
	code, _, _ := strings.Cut(string(re), " ")
	if !isErrorCode(code) {
		return ""
	}
	return code
}

// maxErrorCode bounds the length of an error code taken from a reply.
const maxErrorCode = 32

// isErrorCode reports whether s is shaped like a Redis error code: an
// upper-case letter, then upper-case letters, digits or underscores, at
// most maxErrorCode bytes.
func isErrorCode(s string) bool {
	if s == "" || len(s) > maxErrorCode || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// dialErrorType is the error.type of a failed dial, as shard.ErrorCause
// names it: "timeout" for a deadline (the context's, the dial timeout, or
// a setup command's reply that did not come in time), "canceled", "auth"
// for refused credentials, "dial" for anything else.
func dialErrorType(err error) string {
	switch c := shard.ErrorCause(err); c {
	case shard.CauseTimeout, shard.CauseCanceled, shard.CauseAuth:
		return c
	}
	return shard.CauseDial
}
