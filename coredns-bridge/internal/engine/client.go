// Package engine is the plugin's connection to the gslbd engine: a few persistent Unix-socket
// connections speaking the compact protocol (docs/protocol.md), each multiplexing many queries
// in flight by request id. Connections are re-established in the background with full-jitter
// exponential backoff, cut short by demand: a query that finds no connection up wakes a sleeping
// keeper (at most one dial per DemandEvery), and never dials itself, failing fast.
package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gslbd/gslbd/coredns-bridge/internal/frame"
)

// Errors a query can end with besides an *EngineError.
var (
	// ErrDown: no connection to the engine is up, or it closed while the query was in flight.
	ErrDown = errors.New("engine unreachable")
	// ErrTimeout: the query's deadline passed before the answer came.
	ErrTimeout = errors.New("engine timeout")
	// ErrOverload: every connection has its window of in-flight queries full.
	ErrOverload = errors.New("engine overloaded")
)

// EngineError is an ERROR frame the engine sent for a query.
type EngineError struct {
	Code    uint16
	Message string
}

func (e *EngineError) Error() string { return fmt.Sprintf("engine error %d: %s", e.Code, e.Message) }

// Options configure a Client. Zero values take the defaults in brackets.
type Options struct {
	Path        string        // the engine's Unix socket
	Connections int           // connections kept open [2]
	MaxInflight int           // queries in flight per connection, capped by the engine's HELLO_ACK [1024]
	DialTimeout time.Duration // connect + HELLO/HELLO_ACK [200ms]
	PingEvery   time.Duration // PING interval on every connection [1s]
	PingTimeout time.Duration // a connection that has not answered a PING for this long is closed [1s]
	BackoffMin  time.Duration // first reconnect delay bound [25ms]
	BackoffMax  time.Duration // largest reconnect delay bound [250ms]
	// DemandEvery: while queries find no connection up, a keeper dials again this soon after its
	// last failed dial, whatever its backoff, so the engine's return is seen within this time
	// under load; without queries the backoff alone paces the dials [10ms].
	DemandEvery time.Duration
	// SuspectAfter closes a connection after this many consecutive query timeouts with no
	// answer in between (a stalled engine), so later queries fail fast [3].
	SuspectAfter int
	Name         string // sent in HELLO
	// OnUp is called with true when the first connection comes up and false when the last one goes.
	OnUp func(bool)
}

func (o *Options) defaults() {
	if o.Connections <= 0 {
		o.Connections = 2
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = 1024
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 200 * time.Millisecond
	}
	if o.PingEvery <= 0 {
		o.PingEvery = time.Second
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = time.Second
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 25 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		// Short: a failed dial of a local Unix socket costs microseconds, while every moment
		// between the engine's return and the next dial is served stale or fail-safe.
		o.BackoffMax = 250 * time.Millisecond
	}
	if o.DemandEvery <= 0 {
		o.DemandEvery = 10 * time.Millisecond
	}
	if o.SuspectAfter <= 0 {
		o.SuspectAfter = 3
	}
	if o.Name == "" {
		o.Name = "coredns-gslb"
	}
}

// Client multiplexes queries over a pool of engine connections.
type Client struct {
	opts  Options
	slots []atomic.Pointer[conn]
	next  atomic.Uint32
	upN   atomic.Int32

	// wake carries a query's demand for a connection to a sleeping keeper (one token at most).
	wake    chan struct{}
	stop    chan struct{}
	stopped sync.WaitGroup
	once    sync.Once
}

// New returns a client; Start connects it.
func New(opts Options) *Client {
	opts.defaults()
	return &Client{opts: opts, slots: make([]atomic.Pointer[conn], opts.Connections), wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

// Start launches one connection keeper per slot and waits up to wait for the first connection
// (so queries right after start-up succeed when the engine is already there). It never fails:
// an absent engine is retried in the background.
func (c *Client) Start(wait time.Duration) {
	for i := range c.slots {
		c.stopped.Add(1)
		go c.keep(i)
	}
	deadline := time.Now().Add(wait)
	for !c.Up() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// Stop closes every connection; queries in flight end with ErrDown.
func (c *Client) Stop() {
	c.once.Do(func() {
		close(c.stop)
		for i := range c.slots {
			if cn := c.slots[i].Load(); cn != nil {
				cn.close()
			}
		}
		c.stopped.Wait()
	})
}

// Up reports whether at least one connection is up and its engine is serving.
func (c *Client) Up() bool {
	for i := range c.slots {
		if cn := c.slots[i].Load(); cn != nil && cn.serving() {
			return true
		}
	}
	return false
}

// Query sends q (its ID is assigned here) and waits for the answer until ctx ends.
// Errors: ErrDown, ErrTimeout, ErrOverload, *EngineError, or an encoding error.
func (c *Client) Query(ctx context.Context, q *frame.Query) (*frame.Answer, error) {
	n := len(c.slots)
	start := int(c.next.Add(1))
	overloaded := false
	for i := 0; i < n; i++ {
		cn := c.slots[(start+i)%n].Load()
		if cn == nil || !cn.serving() {
			continue
		}
		a, err := cn.query(ctx, q)
		if err == ErrOverload {
			overloaded = true
			continue
		}
		return a, err
	}
	if overloaded {
		return nil, ErrOverload
	}
	// The engine may be back while the keepers sleep out their backoff: wake one (never blocks).
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil, ErrDown
}

// keep owns one slot: dial, handshake, serve until the connection dies, back off, repeat.
func (c *Client) keep(slot int) {
	defer c.stopped.Done()
	backoff := c.opts.BackoffMin
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		cn, err := c.dial()
		if err == nil {
			backoff = c.opts.BackoffMin
			c.slots[slot].Store(cn)
			if c.upN.Add(1) == 1 && c.opts.OnUp != nil {
				c.opts.OnUp(true)
			}
			select {
			case <-c.stop:
				cn.close()
			case <-cn.done:
			}
			c.slots[slot].Store(nil)
			if c.upN.Add(-1) == 0 && c.opts.OnUp != nil {
				c.opts.OnUp(false)
			}
		}
		// Full jitter (sleep U(0, b)) spreads reconnects of many plugins after an engine restart.
		// Past DemandEvery, a query that found no connection ends the sleep: under load the
		// engine's return is seen within DemandEvery, not within the backoff (up to BackoffMax).
		sleep := time.Duration(rand.Int64N(int64(backoff) + 1))
		floor := min(sleep, c.opts.DemandEvery)
		select {
		case <-c.stop:
			return
		case <-time.After(floor):
		}
		if sleep > floor {
			select {
			case <-c.stop:
				return
			case <-c.wake:
			case <-time.After(sleep - floor):
			}
		}
		if err != nil {
			backoff = min(backoff*2, c.opts.BackoffMax)
		}
	}
}

func (c *Client) dial() (*conn, error) {
	nc, err := net.DialTimeout("unix", c.opts.Path, c.opts.DialTimeout)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(c.opts.DialTimeout))
	hello := frame.AppendHello(nil, frame.Hello{MinVersion: frame.Version, MaxVersion: frame.Version, MaxInflight: uint32(c.opts.MaxInflight), Name: c.opts.Name})
	if _, err := nc.Write(hello); err != nil {
		nc.Close()
		return nil, err
	}
	r := bufio.NewReaderSize(nc, 64<<10)
	b, err := frame.ReadFrame(r, nil, frame.MaxLength)
	if err != nil {
		nc.Close()
		return nil, err
	}
	h := frame.ParseHeader(b)
	if h.Kind == frame.KindError {
		e, _ := frame.ParseError(b)
		nc.Close()
		return nil, &EngineError{Code: e.Code, Message: e.Message}
	}
	ack, err := frame.ParseHelloAck(b)
	if err != nil || h.Kind != frame.KindHelloAck || ack.Version != frame.Version {
		nc.Close()
		return nil, fmt.Errorf("engine handshake failed: kind %d, %+v, %v", h.Kind, ack, err)
	}
	_ = nc.SetDeadline(time.Time{})
	window := c.opts.MaxInflight
	if ack.MaxInflight > 0 && int(ack.MaxInflight) < window {
		window = int(ack.MaxInflight)
	}
	cn := &conn{
		nc:      nc,
		opts:    &c.opts,
		window:  window,
		pending: make(map[uint32]chan result, window),
		out:     make(chan []byte, window),
		done:    make(chan struct{}),
	}
	cn.state.Store(uint32(ack.State))
	cn.lastPong.Store(time.Now().UnixNano())
	go cn.readLoop(r)
	go cn.writeLoop()
	go cn.pingLoop()
	return cn, nil
}

// writeBatchBytes bounds the queries gathered into one write.
const writeBatchBytes = 64 << 10

type result struct {
	a   *frame.Answer
	err error
}

// conn is one engine connection: a writer goroutine batching frames into few writes, a reader
// goroutine dispatching answers by id, and a pinger.
type conn struct {
	nc     net.Conn
	opts   *Options
	window int

	mu       sync.Mutex
	pending  map[uint32]chan result
	nextID   uint32
	timeouts int // consecutive query timeouts with no answer in between
	closed   bool

	out      chan []byte
	done     chan struct{}
	state    atomic.Uint32
	lastPong atomic.Int64
}

func (cn *conn) serving() bool { return cn.state.Load() == uint32(frame.StateServing) }

var resultChans = sync.Pool{New: func() any { return make(chan result, 1) }}

func (cn *conn) query(ctx context.Context, q *frame.Query) (*frame.Answer, error) {
	ch := resultChans.Get().(chan result)
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		resultChans.Put(ch)
		return nil, ErrDown
	}
	if len(cn.pending) >= cn.window {
		cn.mu.Unlock()
		resultChans.Put(ch)
		return nil, ErrOverload
	}
	cn.nextID++
	if cn.nextID == 0 {
		cn.nextID = 1
	}
	id := cn.nextID
	cn.pending[id] = ch
	cn.mu.Unlock()

	q.ID = id
	b, err := frame.AppendQuery(make([]byte, 0, 64+len(q.Qname)+len(q.ECS)), q)
	if err != nil {
		cn.forget(id, ch)
		return nil, err
	}
	select {
	case cn.out <- b:
	default:
		cn.forget(id, ch)
		return nil, ErrOverload
	}
	select {
	case r := <-ch:
		resultChans.Put(ch)
		return r.a, r.err
	case <-ctx.Done():
		if !cn.forget(id, ch) {
			// The answer raced the deadline and is already in ch: take it.
			r := <-ch
			resultChans.Put(ch)
			return r.a, r.err
		}
		cn.mu.Lock()
		cn.timeouts++
		suspect := cn.timeouts >= cn.opts.SuspectAfter
		cn.mu.Unlock()
		if suspect {
			cn.close()
		}
		return nil, ErrTimeout
	}
}

// forget removes a pending query; false when the reader (or close) already took it. The
// channel goes back to the pool only when nobody can send on it any more.
func (cn *conn) forget(id uint32, ch chan result) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.pending[id] != ch {
		return false
	}
	delete(cn.pending, id)
	resultChans.Put(ch)
	return true
}

func (cn *conn) deliver(id uint32, r result) {
	cn.mu.Lock()
	ch := cn.pending[id]
	if ch != nil {
		delete(cn.pending, id)
		if r.err == nil {
			cn.timeouts = 0
		}
	}
	cn.mu.Unlock()
	if ch != nil {
		ch <- r // buffered (1): never blocks
	}
}

func (cn *conn) close() {
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		return
	}
	cn.closed = true
	pending := cn.pending
	cn.pending = nil
	cn.mu.Unlock()
	cn.nc.Close()
	close(cn.done)
	for _, ch := range pending {
		ch <- result{err: ErrDown}
	}
}

func (cn *conn) readLoop(r *bufio.Reader) {
	defer cn.close()
	buf := make([]byte, 0, 4096)
	for {
		b, err := frame.ReadFrame(r, buf, frame.MaxLength)
		if err != nil {
			return
		}
		h := frame.ParseHeader(b)
		if h.Version != frame.Version {
			return
		}
		switch h.Kind {
		case frame.KindAnswer:
			a, err := frame.ParseAnswer(b)
			if err != nil {
				cn.deliver(h.ID, result{err: err})
				continue
			}
			cn.deliver(h.ID, result{a: a})
		case frame.KindError:
			e, err := frame.ParseError(b)
			if err != nil {
				return
			}
			if e.Code == frame.ErrCodeUnsupportedVersion {
				return
			}
			cn.deliver(h.ID, result{err: &EngineError{Code: e.Code, Message: e.Message}})
		case frame.KindPong:
			if s, err := frame.ParsePong(b); err == nil {
				cn.state.Store(uint32(s))
			}
			cn.lastPong.Store(time.Now().UnixNano())
		}
	}
}

func (cn *conn) writeLoop() {
	buf := make([]byte, 0, writeBatchBytes)
	for {
		select {
		case <-cn.done:
			return
		case b := <-cn.out:
			buf = append(buf[:0], b...)
			// The handler that queued b made this goroutine the next to run: with one P (GOMAXPROCS 1,
			// CoreDNS pinned to one core) it would write each query alone, one syscall per query and
			// one wake-up of the engine per query. Yielding once lets the other runnable handlers
			// queue their queries first; then a burst of queries leaves in one write.
			runtime.Gosched()
		drain:
			for len(buf) < writeBatchBytes {
				select {
				case b := <-cn.out:
					buf = append(buf, b...)
				default:
					break drain
				}
			}
			if err := cn.writeAll(buf); err != nil {
				cn.close()
				return
			}
		}
	}
}

func (cn *conn) pingLoop() {
	t := time.NewTicker(cn.opts.PingEvery)
	defer t.Stop()
	var id uint32
	for {
		select {
		case <-cn.done:
			return
		case <-t.C:
			if time.Since(time.Unix(0, cn.lastPong.Load())) > cn.opts.PingEvery+cn.opts.PingTimeout {
				cn.close()
				return
			}
			// PING ids count down from the top so they never meet query ids in practice;
			// a PONG is matched by kind, not by id.
			id--
			select {
			case cn.out <- frame.AppendPing(nil, id):
			default:
			}
		}
	}
}
