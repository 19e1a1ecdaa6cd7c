package engine

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gslbd/gslbd/coredns-bridge/internal/enginetest"
)

// A batch larger than the socket buffers arrives whole and in order: writeAll waits for the
// peer to read (EAGAIN on the non-blocking socket) and goes on where it stopped.
func TestWriteAllWaitsForASlowReader(t *testing.T) {
	ln, path := listenUnix(t)
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		time.Sleep(100 * time.Millisecond) // the writer fills the buffers first
		b, _ := io.ReadAll(c)
		got <- b
	}()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 4<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	cn := &conn{nc: nc}
	if err := cn.writeAll(want); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not the %d written", len(b), len(want))
	}
}

// Writing to a connection the peer has closed is an error, never a hang.
func TestWriteAllFailsOnAClosedPeer(t *testing.T) {
	ln, path := listenUnix(t)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cn := &conn{nc: nc}
	done := make(chan error, 1)
	go func() { done <- cn.writeAll(make([]byte, 4<<20)) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("no error writing to a closed peer")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("writeAll hangs on a closed peer")
	}
}

// listenUnix listens on a fresh Unix socket, closed when the test ends.
func listenUnix(t *testing.T) (net.Listener, string) {
	t.Helper()
	path := enginetest.ShortSocket(t)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, path
}
