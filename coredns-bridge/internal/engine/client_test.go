package engine

import (
	"bufio"
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gslbd/gslbd/coredns-bridge/internal/enginetest"
	"github.com/gslbd/gslbd/coredns-bridge/internal/frame"
	"github.com/miekg/dns"
)

func newClient(t *testing.T, path string, opts Options) *Client {
	t.Helper()
	opts.Path = path
	c := New(opts)
	c.Start(time.Second)
	t.Cleanup(c.Stop)
	return c
}

func query(name string) *frame.Query {
	return &frame.Query{Qtype: dns.TypeA, Qclass: dns.ClassINET, Qname: name}
}

func within(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func TestAnswersArriveOutOfOrderAndAreMatchedById(t *testing.T) {
	path := enginetest.ShortSocket(t)
	const n = 16
	var mu sync.Mutex
	var held []func()
	enginetest.Start(t, path, func(q *frame.Query, reply func(*frame.Answer)) {
		mu.Lock()
		defer mu.Unlock()
		held = append(held, func() { enginetest.Echo(q, reply) })
		if len(held) == n {
			for i := n - 1; i >= 0; i-- { // answer in reverse order
				held[i]()
			}
		}
	})
	c := newClient(t, path, Options{Connections: 1})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := dns.Fqdn(string(rune('a'+i)) + ".example.org")
			ctx, cancel := within(5 * time.Second)
			defer cancel()
			a, err := c.Query(ctx, query(name))
			if err != nil {
				errs <- err
				return
			}
			if len(a.Answer) != 1 || a.Answer[0].Header().Name != name {
				errs <- errors.New("answer for another query: " + a.Answer[0].String())
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestTimeoutIsBoundedAndALateAnswerIsDropped(t *testing.T) {
	path := enginetest.ShortSocket(t)
	late := make(chan func(), 4)
	enginetest.Start(t, path, func(q *frame.Query, reply func(*frame.Answer)) {
		if q.Qname == "slow.example.org." {
			late <- func() { enginetest.Echo(q, reply) }
			return
		}
		enginetest.Echo(q, reply)
	})
	c := newClient(t, path, Options{Connections: 1, SuspectAfter: 100})
	ctx, cancel := within(50 * time.Millisecond)
	defer cancel()
	started := time.Now()
	if _, err := c.Query(ctx, query("slow.example.org.")); err != ErrTimeout {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if d := time.Since(started); d > 3*time.Second {
		t.Errorf("timeout took %v", d)
	}
	(<-late)() // the answer arrives after the deadline: no one waits for it
	ctx2, cancel2 := within(2 * time.Second)
	defer cancel2()
	a, err := c.Query(ctx2, query("fast.example.org."))
	if err != nil || a.Answer[0].Header().Name != "fast.example.org." {
		t.Fatalf("after a late answer: %v %v", a, err)
	}
}

func TestStalledEngineMakesTheConnectionSuspect(t *testing.T) {
	path := enginetest.ShortSocket(t)
	enginetest.Start(t, path, func(q *frame.Query, reply func(*frame.Answer)) {})
	c := newClient(t, path, Options{Connections: 1, SuspectAfter: 3, BackoffMin: time.Second, BackoffMax: time.Second})
	for i := 0; i < 3; i++ {
		ctx, cancel := within(20 * time.Millisecond)
		if _, err := c.Query(ctx, query("x.example.org.")); err != ErrTimeout {
			t.Fatalf("query %d: %v", i, err)
		}
		cancel()
	}
	ctx, cancel := within(time.Second)
	defer cancel()
	started := time.Now()
	if _, err := c.Query(ctx, query("x.example.org.")); err != ErrDown {
		t.Fatalf("after 3 timeouts: %v, want ErrDown (fail fast)", err)
	}
	if d := time.Since(started); d > 500*time.Millisecond { // well below the 1 s deadline
		t.Errorf("fail-fast took %v", d)
	}
}

// After an engine restart the plugin is back within the backoff cap, however long the engine was
// away: every moment until the next dial is served stale or fail-safe.
func TestReconnectAfterALongOutageIsQuick(t *testing.T) {
	path := enginetest.ShortSocket(t)
	f := enginetest.Start(t, path, enginetest.Echo)
	c := newClient(t, path, Options{})
	f.Stop()
	os.Remove(path)
	time.Sleep(3 * time.Second) // the backoff reaches its cap
	enginetest.Start(t, path, enginetest.Echo)
	back := time.Now()
	for !c.Up() && time.Since(back) < 5*time.Second {
		time.Sleep(2 * time.Millisecond)
	}
	if d := time.Since(back); d > time.Second {
		t.Errorf("reconnected %v after the engine returned; the default backoff cap is 250 ms", d)
	}
}

// Under load the engine's return is seen within DemandEvery, not within the backoff: a query that
// finds no connection wakes a sleeping keeper. The backoff here is 20 s, so the keepers' own
// timers would reconnect after 10 s on average; with queries arriving the client is up at once.
func TestQueriesDuringAnOutageCutTheBackoffShort(t *testing.T) {
	path := enginetest.ShortSocket(t)
	f := enginetest.Start(t, path, enginetest.Echo)
	c := newClient(t, path, Options{BackoffMin: 20 * time.Second, BackoffMax: 20 * time.Second})
	f.Stop()
	os.Remove(path)
	for c.Up() {
		time.Sleep(2 * time.Millisecond)
	}
	// Both keepers have failed a dial and sleep out a backoff of up to 20 s.
	time.Sleep(100 * time.Millisecond)
	enginetest.Start(t, path, enginetest.Echo)
	back := time.Now()
	for !c.Up() && time.Since(back) < 5*time.Second {
		ctx, cancel := within(time.Second)
		_, _ = c.Query(ctx, query("a.example.org."))
		cancel()
		time.Sleep(time.Millisecond)
	}
	if d := time.Since(back); d > time.Second {
		t.Errorf("reconnected %v after the engine returned under queries; want about DemandEvery (10 ms)", d)
	}
}

func TestEngineRestartFailsFastThenReconnects(t *testing.T) {
	path := enginetest.ShortSocket(t)
	f := enginetest.Start(t, path, enginetest.Echo)
	var ups []bool
	var mu sync.Mutex
	c := newClient(t, path, Options{Connections: 2, BackoffMax: 200 * time.Millisecond, OnUp: func(up bool) {
		mu.Lock()
		ups = append(ups, up)
		mu.Unlock()
	}})
	if !c.Up() {
		t.Fatal("not up after Start")
	}
	f.Stop()
	os.Remove(path)
	deadline := time.Now().Add(2 * time.Second)
	for c.Up() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if c.Up() {
		t.Fatal("still up after the engine stopped")
	}
	ctx, cancel := within(time.Second)
	defer cancel()
	started := time.Now()
	if _, err := c.Query(ctx, query("a.example.org.")); err != ErrDown {
		t.Fatalf("engine down: %v, want ErrDown", err)
	}
	if d := time.Since(started); d > 500*time.Millisecond { // well below the 1 s deadline
		t.Errorf("fail-fast took %v", d)
	}
	enginetest.Start(t, path, enginetest.Echo)
	deadline = time.Now().Add(3 * time.Second)
	for !c.Up() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !c.Up() {
		t.Fatal("did not reconnect within the backoff cap")
	}
	if _, err := c.Query(ctx, query("a.example.org.")); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ups) < 3 || !ups[0] || ups[1] || !ups[2] {
		t.Errorf("OnUp calls %v, want true, false, true", ups)
	}
}

func TestOverloadFailsFastWhenTheWindowIsFull(t *testing.T) {
	path := enginetest.ShortSocket(t)
	release := make(chan struct{})
	enginetest.Start(t, path, func(q *frame.Query, reply func(*frame.Answer)) {
		go func() {
			<-release
			enginetest.Echo(q, reply)
		}()
	})
	c := newClient(t, path, Options{Connections: 1, MaxInflight: 4})
	var wg sync.WaitGroup
	results := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := within(5 * time.Second)
			defer cancel()
			_, err := c.Query(ctx, query("held.example.org."))
			results <- err
		}()
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		cn := c.slots[0].Load()
		cn.mu.Lock()
		n := len(cn.pending)
		cn.mu.Unlock()
		if n == 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := within(time.Second)
	defer cancel()
	if _, err := c.Query(ctx, query("extra.example.org.")); err != ErrOverload {
		t.Fatalf("5th query: %v, want ErrOverload", err)
	}
	close(release)
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestEngineErrorFramesReachTheCaller(t *testing.T) {
	ln, path := listenUnix(t)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		r := bufio.NewReader(c)
		for {
			b, err := frame.ReadFrame(r, nil, frame.MaxLength)
			if err != nil {
				return
			}
			h := frame.ParseHeader(b)
			if h.Kind == frame.KindHello {
				c.Write(frame.AppendHelloAck(nil, frame.HelloAck{Version: 1, State: frame.StateServing, MaxInflight: 8}))
			} else if h.Kind == frame.KindQuery {
				c.Write(frame.AppendError(nil, frame.Error{ID: h.ID, Code: frame.ErrCodeOverloaded, Message: "busy"}))
			}
		}
	}()
	c := newClient(t, path, Options{Connections: 1})
	ctx, cancel := within(time.Second)
	defer cancel()
	_, err := c.Query(ctx, query("a.example.org."))
	var ee *EngineError
	if !errors.As(err, &ee) || ee.Code != frame.ErrCodeOverloaded || ee.Message != "busy" {
		t.Fatalf("got %v", err)
	}
}

func TestAnEngineWithoutACommonVersionIsNotUp(t *testing.T) {
	ln, path := listenUnix(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write(frame.AppendError(nil, frame.Error{Code: frame.ErrCodeUnsupportedVersion, Message: "v2 only"}))
			c.Close()
		}
	}()
	c := newClient(t, path, Options{Connections: 1})
	if c.Up() {
		t.Fatal("up without a common version")
	}
}
