//go:build !linux

package engine

// writeAll writes b to the engine socket (on Linux with raw write(2) calls; see write_linux.go).
func (cn *conn) writeAll(b []byte) error {
	_, err := cn.nc.Write(b)
	return err
}
