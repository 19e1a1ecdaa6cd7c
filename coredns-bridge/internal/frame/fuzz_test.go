package frame

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"testing"
)

// FuzzDecoders feeds arbitrary bytes to every decoder the plugin runs on engine input: none may
// panic, whatever the engine (or a corrupted stream) sends. `go test` runs the seeds (the golden
// vectors and their truncations); `go test -fuzz=FuzzDecoders ./internal/frame` explores further.
func FuzzDecoders(f *testing.F) {
	for _, v := range loadVectors(f) {
		b, _ := hex.DecodeString(v.Hex)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			fr, err := ReadFrame(r, nil, MaxLength)
			if err != nil {
				break
			}
			if len(fr) < HeaderLen {
				t.Fatalf("ReadFrame returned %d bytes", len(fr))
			}
			ParseHeader(fr)
			_, _ = ParseAnswer(fr)
			_, _ = ParseQuery(fr)
			_, _ = ParseError(fr)
			_, _ = ParseHello(fr)
			_, _ = ParseHelloAck(fr)
			_, _ = ParsePong(fr)
		}
	})
}
