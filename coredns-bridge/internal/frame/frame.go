// Package frame is the Go codec of the compact protocol, version 1, spoken between the gslb
// CoreDNS plugin and the gslbd engine over a Unix socket. The byte layout is specified in
// docs/protocol.md at the repository root and pinned by test/fixtures/compact/vectors.json,
// which the engine's TypeScript codec is tested against too.
//
// The plugin encodes HELLO, QUERY and PING and decodes the rest; the engine-side encoders exist
// for the tests' fake engine and for the benchmark's do-nothing engine.
package frame

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/miekg/dns"
)

// Version is the protocol version this codec speaks.
const Version = 1

// Frame size limits (bytes). Length is the header's first field: the bytes after it.
const (
	HeaderLen = 12
	MinLength = 8
	MaxLength = 131072
)

// Kind says what a frame's body holds.
type Kind uint8

// Frame kinds (docs/protocol.md, Frames).
const (
	KindQuery    Kind = 1
	KindAnswer   Kind = 2
	KindError    Kind = 3
	KindPing     Kind = 4
	KindPong     Kind = 5
	KindHello    Kind = 6
	KindHelloAck Kind = 7
)

// Flags of QUERY and ANSWER frames.
const (
	QueryECS      uint16 = 0x0001 // the QUERY carries the query's ECS option data
	AnswerAA      uint16 = 0x0001 // set AA in the reply
	AnswerNotOurs uint16 = 0x0002 // the name is outside every zone of the engine (REFUSED)
)

// Error codes of ERROR frames.
const (
	ErrCodeOverloaded         uint16 = 1
	ErrCodeInternal           uint16 = 2
	ErrCodeBadRequest         uint16 = 3
	ErrCodeUnsupportedVersion uint16 = 4
	ErrCodeUnknownKind        uint16 = 5
)

// Engine states in HELLO_ACK and PONG.
const (
	StateServing  uint8 = 1
	StateStopping uint8 = 2
)

// Transport numbers of the client's transport in a QUERY.
const (
	TransportUDP   uint8 = 0
	TransportTCP   uint8 = 1
	TransportTLS   uint8 = 2
	TransportHTTPS uint8 = 3
	TransportQUIC  uint8 = 4
	TransportGRPC  uint8 = 5
	TransportH3    uint8 = 6
	TransportOther uint8 = 255
)

// ErrMalformed is wrapped by every decoding error about a body.
var ErrMalformed = errors.New("malformed frame")

// Header is the fixed start of every frame.
type Header struct {
	Length  uint32
	Version uint8
	Kind    Kind
	Flags   uint16
	ID      uint32
}

// ParseHeader reads the header of a whole frame (at least HeaderLen bytes).
func ParseHeader(b []byte) Header {
	return Header{
		Length:  binary.BigEndian.Uint32(b[0:]),
		Version: b[4],
		Kind:    Kind(b[5]),
		Flags:   binary.BigEndian.Uint16(b[6:]),
		ID:      binary.BigEndian.Uint32(b[8:]),
	}
}

// ReadFrame reads one whole frame (header included) from r into buf's storage when it fits.
// It returns an error, and the stream must be closed, when the length is below MinLength or
// above max.
func ReadFrame(r *bufio.Reader, buf []byte, max int) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(l[:]))
	if n < MinLength || n > max || n > MaxLength {
		return nil, fmt.Errorf("%w: length %d outside %d..%d", ErrMalformed, n, MinLength, max)
	}
	if cap(buf) < 4+n {
		buf = make([]byte, 4+n)
	}
	buf = buf[:4+n]
	copy(buf, l[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, err
	}
	return buf, nil
}

func appendHeader(dst []byte, kind Kind, flags uint16, id uint32) []byte {
	dst = append(dst, 0, 0, 0, 0, Version, byte(kind))
	dst = binary.BigEndian.AppendUint16(dst, flags)
	return binary.BigEndian.AppendUint32(dst, id)
}

// finish writes the length field of the frame that starts at start.
func finish(b []byte, start int) []byte {
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// Hello is the shim's first frame.
type Hello struct {
	MinVersion, MaxVersion uint8
	MaxInflight            uint32
	Name                   string
}

// AppendHello appends a HELLO frame (id 0).
func AppendHello(dst []byte, h Hello) []byte {
	start := len(dst)
	dst = appendHeader(dst, KindHello, 0, 0)
	dst = append(dst, h.MinVersion, h.MaxVersion, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, h.MaxInflight)
	dst = appendShortString(dst, h.Name)
	return finish(dst, start)
}

// ParseHello decodes a HELLO frame.
func ParseHello(b []byte) (Hello, error) {
	body := b[HeaderLen:]
	if len(body) < 9 || len(body) < 9+int(body[8]) {
		return Hello{}, fmt.Errorf("%w: HELLO body too short", ErrMalformed)
	}
	return Hello{MinVersion: body[0], MaxVersion: body[1], MaxInflight: binary.BigEndian.Uint32(body[4:]), Name: string(body[9 : 9+int(body[8])])}, nil
}

// HelloAck is the engine's answer to HELLO.
type HelloAck struct {
	Version, State uint8
	MaxInflight    uint32
	Name           string
}

// AppendHelloAck appends a HELLO_ACK frame (id 0).
func AppendHelloAck(dst []byte, h HelloAck) []byte {
	start := len(dst)
	dst = appendHeader(dst, KindHelloAck, 0, 0)
	dst = append(dst, h.Version, h.State, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, h.MaxInflight)
	dst = appendShortString(dst, h.Name)
	return finish(dst, start)
}

// ParseHelloAck decodes a HELLO_ACK frame.
func ParseHelloAck(b []byte) (HelloAck, error) {
	body := b[HeaderLen:]
	if len(body) < 9 || len(body) < 9+int(body[8]) {
		return HelloAck{}, fmt.Errorf("%w: HELLO_ACK body too short", ErrMalformed)
	}
	return HelloAck{Version: body[0], State: body[1], MaxInflight: binary.BigEndian.Uint32(body[4:]), Name: string(body[9 : 9+int(body[8])])}, nil
}

func appendShortString(dst []byte, s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// Query is one DNS question with what the engine needs to know of the client.
type Query struct {
	ID        uint32
	Qtype     uint16
	Qclass    uint16
	Transport uint8
	// Source is the resolver's address; the zero Addr means unknown (family 0).
	Source     netip.Addr
	SourcePort uint16
	// ECS is the query's ECS option data as on the wire (RFC 7871 §6); nil when absent.
	ECS []byte
	// Qname is the question name in presentation form, case as received, fully qualified.
	Qname string
}

// AppendQuery appends a QUERY frame. The name is packed uncompressed; an IPv4-mapped source
// address is sent as IPv4.
func AppendQuery(dst []byte, q *Query) ([]byte, error) {
	start := len(dst)
	var flags uint16
	if q.ECS != nil {
		flags |= QueryECS
	}
	dst = appendHeader(dst, KindQuery, flags, q.ID)
	dst = binary.BigEndian.AppendUint16(dst, q.Qtype)
	dst = binary.BigEndian.AppendUint16(dst, q.Qclass)
	src := q.Source.Unmap()
	var family byte
	switch {
	case src.Is4():
		family = 1
	case src.Is6():
		family = 2
	}
	dst = append(dst, q.Transport, family)
	dst = binary.BigEndian.AppendUint16(dst, q.SourcePort)
	if family != 0 {
		dst = append(dst, src.AsSlice()...)
	}
	if q.ECS != nil {
		if len(q.ECS) > 255 {
			return dst[:start], fmt.Errorf("%w: ECS option of %d bytes", ErrMalformed, len(q.ECS))
		}
		dst = append(dst, byte(len(q.ECS)))
		dst = append(dst, q.ECS...)
	}
	off := len(dst)
	dst = append(dst, make([]byte, 256)...)
	end, err := dns.PackDomainName(dns.Fqdn(q.Qname), dst, off, nil, false)
	if err != nil {
		return dst[:start], err
	}
	return finish(dst[:end], start), nil
}

// ParseQuery decodes a QUERY frame.
func ParseQuery(b []byte) (*Query, error) {
	h := ParseHeader(b)
	body := b[HeaderLen:]
	if len(body) < 8 {
		return nil, fmt.Errorf("%w: QUERY body too short", ErrMalformed)
	}
	q := &Query{ID: h.ID, Qtype: binary.BigEndian.Uint16(body), Qclass: binary.BigEndian.Uint16(body[2:]), Transport: body[4], SourcePort: binary.BigEndian.Uint16(body[6:])}
	off := 8
	switch body[5] {
	case 1:
		if len(body) < off+4 {
			return nil, fmt.Errorf("%w: source address", ErrMalformed)
		}
		q.Source = netip.AddrFrom4([4]byte(body[off : off+4]))
		off += 4
	case 2:
		if len(body) < off+16 {
			return nil, fmt.Errorf("%w: source address", ErrMalformed)
		}
		q.Source = netip.AddrFrom16([16]byte(body[off : off+16]))
		off += 16
	case 0:
	default:
		return nil, fmt.Errorf("%w: source family %d", ErrMalformed, body[5])
	}
	if h.Flags&QueryECS != 0 {
		if len(body) < off+1 || len(body) < off+1+int(body[off]) {
			return nil, fmt.Errorf("%w: ECS option", ErrMalformed)
		}
		n := int(body[off])
		q.ECS = append([]byte{}, body[off+1:off+1+n]...)
		off += 1 + n
	}
	name, _, err := dns.UnpackDomainName(body, off)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	q.Qname = name
	return q, nil
}

// Answer is the engine's answer to one QUERY.
type Answer struct {
	ID    uint32
	Flags uint16
	Rcode uint16
	// ECSScope is the SCOPE PREFIX-LENGTH to echo, in bits of the query's ECS family.
	ECSScope uint8
	// ClientScope is the answer's scope in bits of the client address's family (IPv4-mapped folded).
	ClientScope uint8
	Answer      []dns.RR
	Ns          []dns.RR
	Extra       []dns.RR
}

// AppendAnswer appends an ANSWER frame with its records packed uncompressed.
func AppendAnswer(dst []byte, a *Answer) ([]byte, error) {
	start := len(dst)
	dst = appendHeader(dst, KindAnswer, a.Flags, a.ID)
	dst = binary.BigEndian.AppendUint16(dst, a.Rcode)
	dst = append(dst, a.ECSScope, a.ClientScope)
	for _, s := range [][]dns.RR{a.Answer, a.Ns, a.Extra} {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	}
	for _, s := range [][]dns.RR{a.Answer, a.Ns, a.Extra} {
		for _, rr := range s {
			off := len(dst)
			dst = append(dst, make([]byte, dns.Len(rr)+256)...)
			end, err := dns.PackRR(rr, dst, off, nil, false)
			if err != nil {
				return dst[:start], err
			}
			dst = dst[:end]
		}
	}
	return finish(dst, start), nil
}

// ParseAnswer decodes an ANSWER frame; the records are copied out of b.
func ParseAnswer(b []byte) (*Answer, error) {
	h := ParseHeader(b)
	body := b[HeaderLen:]
	if len(body) < 10 {
		return nil, fmt.Errorf("%w: ANSWER body too short", ErrMalformed)
	}
	a := &Answer{ID: h.ID, Flags: h.Flags, Rcode: binary.BigEndian.Uint16(body), ECSScope: body[2], ClientScope: body[3]}
	off := 10
	var err error
	sections := []*[]dns.RR{&a.Answer, &a.Ns, &a.Extra}
	for i, s := range sections {
		n := int(binary.BigEndian.Uint16(body[4+2*i:]))
		if n == 0 {
			continue
		}
		*s = make([]dns.RR, 0, n)
		for j := 0; j < n; j++ {
			if off >= len(body) {
				return nil, fmt.Errorf("%w: %d records missing", ErrMalformed, n-j)
			}
			var rr dns.RR
			rr, off, err = dns.UnpackRR(body, off)
			if err != nil || rr == nil {
				return nil, fmt.Errorf("%w: record: %v", ErrMalformed, err)
			}
			*s = append(*s, rr)
		}
	}
	return a, nil
}

// Error is an ERROR frame.
type Error struct {
	ID      uint32
	Code    uint16
	Message string
}

// AppendError appends an ERROR frame.
func AppendError(dst []byte, e Error) []byte {
	start := len(dst)
	dst = appendHeader(dst, KindError, 0, e.ID)
	dst = binary.BigEndian.AppendUint16(dst, e.Code)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(e.Message)))
	dst = append(dst, e.Message...)
	return finish(dst, start)
}

// ParseError decodes an ERROR frame.
func ParseError(b []byte) (Error, error) {
	h := ParseHeader(b)
	body := b[HeaderLen:]
	if len(body) < 4 || len(body) < 4+int(binary.BigEndian.Uint16(body[2:])) {
		return Error{}, fmt.Errorf("%w: ERROR body too short", ErrMalformed)
	}
	return Error{ID: h.ID, Code: binary.BigEndian.Uint16(body), Message: string(body[4 : 4+int(binary.BigEndian.Uint16(body[2:]))])}, nil
}

// AppendPing appends a PING frame.
func AppendPing(dst []byte, id uint32) []byte {
	start := len(dst)
	return finish(appendHeader(dst, KindPing, 0, id), start)
}

// AppendPong appends a PONG frame answering the PING with id.
func AppendPong(dst []byte, id uint32, state uint8) []byte {
	start := len(dst)
	return finish(append(appendHeader(dst, KindPong, 0, id), state), start)
}

// ParsePong returns the engine state carried by a PONG frame.
func ParsePong(b []byte) (uint8, error) {
	if len(b) < HeaderLen+1 {
		return 0, fmt.Errorf("%w: PONG body too short", ErrMalformed)
	}
	return b[HeaderLen], nil
}
