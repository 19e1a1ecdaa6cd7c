// Package enginetest is a stand-in gslbd engine for Go tests: it speaks the engine's side of the
// compact protocol on a Unix socket and lets a test decide when and how each query is answered.
package enginetest

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/gslbd/gslbd/coredns-bridge/internal/frame"
	"github.com/miekg/dns"
)

// Engine speaks the engine's side of the compact protocol on a Unix socket. handle gets every
// QUERY and the function that sends its ANSWER, so a test chooses when (and whether) to answer.
type Engine struct {
	t      testing.TB
	path   string
	ln     net.Listener
	handle func(q *frame.Query, reply func(*frame.Answer))
	mu     sync.Mutex
	conns  []net.Conn
}

// ShortSocket is a socket path in a fresh temporary folder, removed after the test.
func ShortSocket(t testing.TB) string {
	// Unix socket paths are limited to 107 bytes; t.TempDir() with long test names can exceed it.
	dir, err := os.MkdirTemp("", "gslb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "e.sock")
}

// Start listens on path; handle gets every QUERY and the function that sends its ANSWER.
func Start(t testing.TB, path string, handle func(q *frame.Query, reply func(*frame.Answer))) *Engine {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	f := &Engine{t: t, path: path, ln: ln, handle: handle}
	go f.accept()
	t.Cleanup(f.Stop)
	return f
}

func (f *Engine) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		go f.serve(c)
	}
}

func (f *Engine) serve(c net.Conn) {
	r := bufio.NewReader(c)
	var wmu sync.Mutex
	send := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		c.Write(b)
	}
	for {
		b, err := frame.ReadFrame(r, nil, frame.MaxLength)
		if err != nil {
			return
		}
		h := frame.ParseHeader(b)
		switch h.Kind {
		case frame.KindHello:
			send(frame.AppendHelloAck(nil, frame.HelloAck{Version: 1, State: frame.StateServing, MaxInflight: 1024, Name: "fake"}))
		case frame.KindPing:
			send(frame.AppendPong(nil, h.ID, frame.StateServing))
		case frame.KindQuery:
			q, err := frame.ParseQuery(b)
			if err != nil {
				f.t.Error(err)
				return
			}
			f.handle(q, func(a *frame.Answer) {
				a.ID = q.ID
				out, err := frame.AppendAnswer(nil, a)
				if err != nil {
					f.t.Error(err)
				}
				send(out)
			})
		}
	}
}

// Stop closes the listener and every connection.
func (f *Engine) Stop() {
	f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

// Echo answers each query with an A record whose owner is the query name.
func Echo(q *frame.Query, reply func(*frame.Answer)) {
	reply(&frame.Answer{Flags: frame.AnswerAA, Answer: []dns.RR{test.A(q.Qname + " 30 IN A 192.0.2.1")}})
}
