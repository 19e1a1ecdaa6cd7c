package frame

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"testing"

	"github.com/miekg/dns"
)

// The golden vectors shared with the engine's TypeScript tests (src/doors/compact/frameCodec.test.ts).
const vectorsFile = "../../../test/fixtures/compact/vectors.json"

type record struct {
	Text string `json:"text"`
}

type vector struct {
	Name   string `json:"name"`
	Hex    string `json:"hex"`
	Fields struct {
		Kind          string   `json:"kind"`
		ID            uint32   `json:"id"`
		MinVersion    uint8    `json:"minVersion"`
		MaxVersion    uint8    `json:"maxVersion"`
		Version       uint8    `json:"version"`
		State         uint8    `json:"state"`
		MaxInflight   uint32   `json:"maxInflight"`
		Name          string   `json:"name"`
		Qtype         uint16   `json:"qtype"`
		Qclass        uint16   `json:"qclass"`
		Transport     uint8    `json:"transport"`
		SourceAddress string   `json:"sourceAddress"`
		SourcePort    uint16   `json:"sourcePort"`
		ECS           *string  `json:"ecs"`
		Qname         string   `json:"qname"`
		Rcode         uint16   `json:"rcode"`
		Authoritative bool     `json:"authoritative"`
		NotOurs       bool     `json:"notOurs"`
		ECSScope      uint8    `json:"ecsScope"`
		ClientScope   uint8    `json:"clientScope"`
		Answer        []record `json:"answer"`
		Authority     []record `json:"authority"`
		Additional    []record `json:"additional"`
		Code          uint16   `json:"code"`
		Message       string   `json:"message"`
	} `json:"fields"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	raw, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int      `json:"version"`
		Frames  []vector `json:"frames"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != Version || len(doc.Frames) < 10 {
		t.Fatalf("vectors: version %d, %d frames", doc.Version, len(doc.Frames))
	}
	return doc.Frames
}

func rrs(t *testing.T, recs []record) []dns.RR {
	t.Helper()
	out := make([]dns.RR, 0, len(recs))
	for _, r := range recs {
		rr, err := dns.NewRR(r.Text)
		if err != nil {
			t.Fatalf("%s: %v", r.Text, err)
		}
		out = append(out, rr)
	}
	return out
}

func sameRRs(t *testing.T, name string, got []dns.RR, want []dns.RR) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i].String() != want[i].String() {
			t.Errorf("%s: record %d is %q, want %q", name, i, got[i].String(), want[i].String())
		}
	}
}

func TestGoldenVectors(t *testing.T) {
	kinds := map[string]bool{}
	for _, v := range loadVectors(t) {
		f := v.Fields
		kinds[f.Kind] = true
		want, err := hex.DecodeString(v.Hex)
		if err != nil {
			t.Fatal(err)
		}
		h := ParseHeader(want)
		if int(h.Length) != len(want)-4 || h.Version != Version || h.ID != f.ID {
			t.Errorf("%s: header %+v", v.Name, h)
		}
		var got []byte
		switch f.Kind {
		case "HELLO":
			hello := Hello{MinVersion: f.MinVersion, MaxVersion: f.MaxVersion, MaxInflight: f.MaxInflight, Name: f.Name}
			got = AppendHello(nil, hello)
			if p, err := ParseHello(want); err != nil || p != hello {
				t.Errorf("%s: parsed %+v, %v", v.Name, p, err)
			}
		case "HELLO_ACK":
			ack := HelloAck{Version: f.Version, State: f.State, MaxInflight: f.MaxInflight, Name: f.Name}
			got = AppendHelloAck(nil, ack)
			if p, err := ParseHelloAck(want); err != nil || p != ack {
				t.Errorf("%s: parsed %+v, %v", v.Name, p, err)
			}
		case "QUERY":
			q := &Query{ID: f.ID, Qtype: f.Qtype, Qclass: f.Qclass, Transport: f.Transport, SourcePort: f.SourcePort, Qname: f.Qname + "."}
			if f.SourceAddress != "" {
				q.Source = netip.MustParseAddr(f.SourceAddress)
			}
			if f.ECS != nil {
				q.ECS, _ = hex.DecodeString(*f.ECS)
			}
			if got, err = AppendQuery(nil, q); err != nil {
				t.Fatal(err)
			}
			p, err := ParseQuery(want)
			if err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			if p.Qname != q.Qname || p.Qtype != q.Qtype || p.Qclass != q.Qclass || p.Transport != q.Transport ||
				p.Source != q.Source || p.SourcePort != q.SourcePort || !bytes.Equal(p.ECS, q.ECS) || (p.ECS == nil) != (q.ECS == nil) {
				t.Errorf("%s: parsed %+v, want %+v", v.Name, p, q)
			}
		case "ANSWER":
			var flags uint16
			if f.Authoritative {
				flags |= AnswerAA
			}
			if f.NotOurs {
				flags |= AnswerNotOurs
			}
			a := &Answer{ID: f.ID, Flags: flags, Rcode: f.Rcode, ECSScope: f.ECSScope, ClientScope: f.ClientScope,
				Answer: rrs(t, f.Answer), Ns: rrs(t, f.Authority), Extra: rrs(t, f.Additional)}
			if got, err = AppendAnswer(nil, a); err != nil {
				t.Fatal(err)
			}
			p, err := ParseAnswer(want)
			if err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			if p.ID != a.ID || p.Flags != a.Flags || p.Rcode != a.Rcode || p.ECSScope != a.ECSScope || p.ClientScope != a.ClientScope {
				t.Errorf("%s: parsed %+v", v.Name, p)
			}
			sameRRs(t, v.Name, p.Answer, a.Answer)
			sameRRs(t, v.Name, p.Ns, a.Ns)
			sameRRs(t, v.Name, p.Extra, a.Extra)
		case "ERROR":
			e := Error{ID: f.ID, Code: f.Code, Message: f.Message}
			got = AppendError(nil, e)
			if p, err := ParseError(want); err != nil || p != e {
				t.Errorf("%s: parsed %+v, %v", v.Name, p, err)
			}
		case "PING":
			got = AppendPing(nil, f.ID)
		case "PONG":
			got = AppendPong(nil, f.ID, f.State)
			if s, err := ParsePong(want); err != nil || s != f.State {
				t.Errorf("%s: state %d, %v", v.Name, s, err)
			}
		default:
			t.Fatalf("%s: unknown kind %s", v.Name, f.Kind)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoded\n %x\nwant\n %x", v.Name, got, want)
		}
	}
	if len(kinds) != 7 {
		t.Errorf("vectors cover kinds %v, want all 7", kinds)
	}
}

func TestReadFrameSplitsAStreamAndRejectsBadLengths(t *testing.T) {
	var stream []byte
	vs := loadVectors(t)
	for _, v := range vs {
		b, _ := hex.DecodeString(v.Hex)
		stream = append(stream, b...)
	}
	r := bufio.NewReaderSize(bytes.NewReader(stream), 16)
	for _, v := range vs {
		b, err := ReadFrame(r, nil, MaxLength)
		if err != nil || hex.EncodeToString(b) != v.Hex {
			t.Fatalf("%s: %x, %v", v.Name, b, err)
		}
	}
	for _, bad := range []string{"00000007", "00020001"} {
		b, _ := hex.DecodeString(bad)
		if _, err := ReadFrame(bufio.NewReader(bytes.NewReader(b)), nil, MaxLength); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestParseRejectsTruncatedBodies(t *testing.T) {
	for _, v := range loadVectors(t) {
		b, _ := hex.DecodeString(v.Hex)
		for cut := HeaderLen; cut < len(b); cut++ {
			var err error
			switch v.Fields.Kind {
			case "QUERY":
				_, err = ParseQuery(b[:cut])
			case "ANSWER":
				_, err = ParseAnswer(b[:cut])
			case "ERROR":
				_, err = ParseError(b[:cut])
			case "HELLO_ACK":
				_, err = ParseHelloAck(b[:cut])
			default:
				continue
			}
			if err == nil {
				t.Errorf("%s cut at %d: no error", v.Name, cut)
			}
		}
	}
}
