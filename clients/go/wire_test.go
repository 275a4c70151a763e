package leasehold

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// The hex examples of PROTOCOL.md sections 3 and 11, and the pure rules of section 9; no
// sockets.

func unhex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRequestsEncodeAsTheProtocolExamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"acquire", appendAcquire(nil, 10, 30, 0x0A0A0A0A0A0A0A0A, "orders/42"), "41 0A 1E 0A 0A 0A 0A 0A 0A 0A 0A 6F 72 64 65 72 73 2F 34 32 0A"},
		{"release", appendTokenRequest(nil, opRelease, 0, 1000, "orders/42"), "52 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A"},
		{"extend", appendTokenRequest(nil, opExtend, 60, 1000, "orders/42"), "45 3C 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A"},
		{"ping", appendPing(nil, 7), "50 00 00 00 00 00 00 00 07 0A"},
		{"acquire café", appendAcquire(nil, 0, 5, 1, "café"), "41 00 05 00 00 00 00 00 00 00 01 63 61 66 C3 A9 0A"},
		{"check", appendTokenRequest(nil, opCheck, 0, 1000, "orders/42"), "43 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A"},
		{"check k", appendTokenRequest(nil, opCheck, 0, 10, "k"), "43 00 00 00 00 00 00 00 0A 6B 0A"},
		{"shared (13.1)", appendShared(nil, 1, 2, 3, 4, "k"), "53 01 02 00 00 00 00 00 00 00 03 00 04 6B 0A"},
	} {
		if want := unhex(t, tc.want); !bytes.Equal(tc.got, want) {
			t.Errorf("%s: got % X, want % X", tc.name, tc.got, want)
		}
	}
}

func TestAnswersDecodeWithBinaryHeadersHoldingLineFeeds(t *testing.T) {
	stream := unhex(t, "41 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 00 00 00 03 E8 00 00 00 00 0A"+ // Acquired
		"43 00 00 00 00 00 00 03 E8 0A"+ // Current
		"4E 00 00 00 00 00 00 03 E8 0A"+ // Not held
		"54 00 00 00 00 00 00 00 0A 0A"+ // Timeout, owner 10
		"4C 00 00 00 00 00 00 00 0B 00 03 0A") // limit mismatch (13.1): owner 11, limit 3
	stream = append(stream, "X\x08leader=10.0.0.2:7420\n"...)
	for _, split := range []bool{false, true} {
		var src io.Reader = bytes.NewReader(stream)
		if split { // every frame split at every byte
			src = iotest.OneByteReader(src)
		}
		decodeAll(t, bufio.NewReader(src))
	}
	if _, err := readAnswer(bufio.NewReader(strings.NewReader("Z"))); err == nil {
		t.Fatal("an unknown answer op must be a protocol error")
	}
	if _, err := readAnswer(bufio.NewReader(strings.NewReader("R\x00\x00\x00\x00\x00\x00\x00\x01x"))); err == nil {
		t.Fatal("a missing terminator must be a protocol error")
	}
	if _, err := readAnswer(bufio.NewReader(strings.NewReader("A\x00\x00"))); err != io.ErrUnexpectedEOF {
		t.Fatalf("a truncated frame: want io.ErrUnexpectedEOF, got %v", err)
	}
}

func decodeAll(t *testing.T, r *bufio.Reader) {
	want := []answer{
		{op: opAcquire, id: 0x0A0A0A0A0A0A0A0A, token: 1000},
		{op: opCheck, id: 1000},
		{op: opNotHeld, id: 1000},
		{op: opTimeout, id: 10},
		{op: opMismatch, id: 11, limit: 3},
		{op: opError, code: 8, message: "leader=10.0.0.2:7420"},
	}
	for i, w := range want {
		a, err := readAnswer(r)
		if err != nil || !reflect.DeepEqual(a, w) {
			t.Fatalf("answer %d: got %+v, %v; want %+v", i, a, err, w)
		}
	}
	if leaderHint(want[5].message) != "10.0.0.2:7420" {
		t.Fatal("leader hint")
	}
}

func TestWireWaitIsTheTimeLeftRoundedUpCappedAndNeverPastD(t *testing.T) {
	d := time.Unix(1000, 0)
	for _, tc := range []struct {
		left time.Duration
		want uint8
		ok   bool
	}{{10 * time.Second, 10, true}, {9*time.Second + time.Nanosecond, 10, true}, {time.Nanosecond, 1, true},
		{300 * time.Second, 255, true}, {0, 0, false}, {-time.Second, 0, false}} {
		w, ok := wireWait(d, d.Add(-tc.left))
		if w != tc.want || ok != tc.ok {
			t.Errorf("left %v: got %d %v, want %d %v", tc.left, w, ok, tc.want, tc.ok)
		}
	}
}

func TestMarginCoversTheWholeInterval(t *testing.T) {
	o, _ := Options{Servers: []string{"h"}}.withDefaults()
	if o.Servers[0] != "h:7420" {
		t.Fatalf("default port: %s", o.Servers[0])
	}
	if m := o.margin(2 * time.Second); m != 50*time.Millisecond {
		t.Fatalf("floor: %v", m)
	}
	// a long queued wait counts: 200 s queued + 30 s lease → 1 % of 230 s
	if m := o.margin(230 * time.Second); m != 2300*time.Millisecond {
		t.Fatalf("drift over queued + lease: %v", m)
	}
}

// The hex examples of PROTOCOL.md 14.7 (Hello, M) and 15.7 (W).
func TestRevision14RequestsEncodeAsTheProtocolExamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"hello", appendHello(nil, revision14), "48 01 04 0A"},
		{"M exclusive 200 ms", appendMilli(nil, false, 200, 30, 1, 0, nil, "orders/42"),
			"4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 00 6F 72 64 65 72 73 2F 34 32 0A"},
		{"M read lock, lease byte 0x0A", appendMilli(nil, true, 1500, 10, 2, 0, nil, "cfg"),
			"4D 01 00 00 05 DC 0A 00 00 00 00 00 00 00 02 00 00 00 00 63 66 67 0A"},
		{"M semaphore of 4, wait 0", appendMilli(nil, true, 0, 5, 3, 4, nil, "api"),
			"4D 01 00 00 00 00 05 00 00 00 00 00 00 00 03 00 04 00 00 61 70 69 0A"},
		{"withdraw", appendWithdraw(nil, 1, "orders/42"), "57 00 00 00 00 00 00 00 01 6F 72 64 65 72 73 2F 34 32 0A"},
		{"withdraw owner 10", appendWithdraw(nil, 10, "k"), "57 00 00 00 00 00 00 00 0A 6B 0A"},
		{"the release after a grant that came first", appendTokenRequest(nil, opRelease, 0, 1001, "orders/42"),
			"52 00 00 00 00 00 00 03 E9 6F 72 64 65 72 73 2F 34 32 0A"},
	} {
		if want := unhex(t, tc.want); !bytes.Equal(tc.got, want) {
			t.Errorf("%s: got % X, want % X", tc.name, tc.got, want)
		}
	}
}

func TestRevision14AnswersDecodeAsTheProtocolExamples(t *testing.T) {
	stream := unhex(t, "48 01 04 00 03 E4 18 01 00 0A"+ // Hello: 1.4, max-wait 255000 ms, max-value-bytes 256
		"41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E8 00 00 00 BB 0A"+ // M granted after 187 ms, token 1000
		"54 00 00 00 00 00 00 00 01 0A"+ // or timed out / withdrawn
		"41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E9 00 00 03 52 0A"+ // the grant came before the W
		"58 01 75 6E 6B 6E 6F 77 6E 20 6F 70 20 30 78 34 38 0A") // a 1.3 server's answer to H
	want := []answer{
		{op: opHello, rev: 0x0104, maxWaitMs: 255000, maxValueBytes: 256},
		{op: opAcquire, id: 1, token: 1000, queuedMs: 187},
		{op: opTimeout, id: 1},
		{op: opAcquire, id: 1, token: 1001, queuedMs: 850},
		{op: opError, code: 1, message: "unknown op 0x48"},
	}
	for _, split := range []bool{false, true} {
		var src io.Reader = bytes.NewReader(stream)
		if split { // every frame split at every byte
			src = iotest.OneByteReader(src)
		}
		r := bufio.NewReader(src)
		for i, w := range want {
			if a, err := readAnswer(r); err != nil || !reflect.DeepEqual(a, w) {
				t.Fatalf("answer %d (split %v): got %+v, %v; want %+v", i, split, a, err, w)
			}
		}
	}
}

func TestMillisecondWireWaitIsTheTimeLeftRoundedUpAndAtLeast1(t *testing.T) {
	d := time.Unix(1000, 0)
	for _, tc := range []struct {
		left time.Duration
		want uint32
		ok   bool
	}{{200 * time.Millisecond, 200, true}, {199*time.Millisecond + time.Nanosecond, 200, true}, {time.Nanosecond, 1, true},
		{255 * time.Second, 255000, true}, {0, 0, false}, {-time.Millisecond, 0, false}} {
		w, ok := wireWaitMs(d, d.Add(-tc.left))
		if w != tc.want || ok != tc.ok {
			t.Errorf("left %v: got %d %v, want %d %v", tc.left, w, ok, tc.want, tc.ok)
		}
	}
}

func TestAnAcquireIsEncodedForItsSessionsRevision(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRequest(opAcquire, "k", now.Add(1500*time.Millisecond))
	r.owner, r.lease = 7, 5
	if b, enc := r.encode(nil, now, false, maxWait13); enc != encodedOK || b[0] != opAcquire || b[1] != 2 {
		t.Fatalf("1.3 session: want A with wire wait 2 s, got % X (%d)", b, enc)
	}
	if b, enc := r.encode(nil, now, true, 255*time.Second); enc != encodedOK || !bytes.Equal(b[:6], []byte{'M', 0, 0, 0, 0x05, 0xDC}) {
		t.Fatalf("1.4 session: want M with wait_ms 1500, got % X (%d)", b, enc)
	}
	if _, enc := r.encode(nil, now, true, time.Second); enc != encodedOverMax {
		t.Fatalf("a wait past the session's max-wait must not be sent, got %d", enc)
	}
	if _, enc := r.encode(nil, now.Add(2*time.Second), true, 255*time.Second); enc != encodedLate {
		t.Fatalf("D passed: want not sent, got %d", enc)
	}
	r.shared, r.limit, r.op = true, 4, opShared
	if b, _ := r.encode(nil, now, true, 255*time.Second); b[1] != 1 || b[15] != 0 || b[16] != 4 {
		t.Fatalf("shared M: want flags 1 and limit 4, got % X", b)
	}
}
