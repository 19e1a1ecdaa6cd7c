//go:build linux

package engine

import (
	"syscall"
	"unsafe"
)

// writeAll writes b to the engine socket with raw write(2) calls, waiting in the netpoller when
// the socket buffer is full. Raw, not through the runtime's syscall entry: that write wakes the
// engine, which on a shared core runs at once while this thread is still inside the call; a
// thread seen in a syscall for more than 20 µs has its P taken away by sysmon and handed to
// another thread, and each such hand-off costs thread wake-ups and context switches. The write
// itself never blocks (the socket is non-blocking).
func (cn *conn) writeAll(b []byte) error {
	sc, ok := cn.nc.(syscall.Conn)
	if !ok {
		_, err := cn.nc.Write(b)
		return err
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(b) > 0 {
			n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch errno {
			case 0:
				b = b[n:]
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				werr = errno
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}
