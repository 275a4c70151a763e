package leasehold

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// The frames of docs/PROTOCOL.md section 3. Headers are binary and may hold 0x0A, so a frame
// is read by its op's header length first and only then up to the terminating 0x0A.

const (
	opAcquire   = 'A'
	opRelease   = 'R'
	opExtend    = 'E'
	opPing      = 'P'
	opCheck     = 'C'
	opShared    = 'S' // shared Acquire (PROTOCOL.md section 13)
	opTimeout   = 'T'
	opBusy      = 'B'
	opNotHeld   = 'N'
	opError     = 'X'
	opMismatch  = 'L' // limit mismatch, the answer to a shared Acquire (13.1)
	opHello     = 'H' // revision 1.4 (PROTOCOL.md 14.1): asked first on a session
	opMilli     = 'M' // revision 1.4 (14.2): an Acquire or shared Acquire with its wait in ms
	opWithdraw  = 'W' // revision 1.4 (section 15): withdraw this session's queued acquire
	opObserve   = 'O' // revision 1.4 (section 16): observe a key; also each event of a watch
	opUnobserve = 'U' // revision 1.4 (16.1): end a watch; also its answer
	opValue     = 'V' // revision 1.4 (section 17): set the value of an exclusive grant

	// revision14 is the revision this client speaks, as H carries it (major high, minor low).
	revision14 = 0x0104
	// maxWait13 is the longest wire wait of A and S, the maximum of a 1.3 session (9.13).
	maxWait13 = 255 * time.Second
	// maxCallerWait is the longest wait a caller may ask for (9.3 from 1.4: the largest
	// max-wait a server may have); a session whose maximum is shorter does not send it.
	maxCallerWait = 3600 * time.Second

	// maxValue is the longest value any server takes (17.5: max-value-bytes is at most 1024).
	maxValue = 1024

	maxErrorMessage = 200
)

// validKey reports why key cannot go on the wire, or "" when it can. The server's own limit
// (max-key-bytes, default 512) is checked by the server.
func validKey(key string) string {
	switch {
	case key == "":
		return "empty key"
	case !utf8.ValidString(key):
		return "key is not valid UTF-8"
	}
	for i := 0; i < len(key); i++ {
		if key[i] == '\n' {
			return "key contains a line feed (0x0A)"
		}
	}
	return ""
}

func appendAcquire(b []byte, wait, lease uint8, owner uint64, key string) []byte {
	b = append(b, opAcquire, wait, lease)
	b = binary.BigEndian.AppendUint64(b, owner)
	b = append(b, key...)
	return append(b, '\n')
}

func appendShared(b []byte, wait, lease uint8, owner uint64, limit uint16, key string) []byte {
	b = append(b, opShared, wait, lease)
	b = binary.BigEndian.AppendUint64(b, owner)
	b = binary.BigEndian.AppendUint16(b, limit)
	b = append(b, key...)
	return append(b, '\n')
}

// appendTokenRequest encodes Release and Check (op token key) and Extend (op lease token key).
func appendTokenRequest(b []byte, op byte, lease uint8, token uint64, key string) []byte {
	b = append(b, op)
	if op == opExtend {
		b = append(b, lease)
	}
	b = binary.BigEndian.AppendUint64(b, token)
	b = append(b, key...)
	return append(b, '\n')
}

// appendMilli encodes M (PROTOCOL.md 14.2): flags bit 0 is the kind (1 shared), limit 0 on an
// exclusive one; value (exclusive only, 17.2) goes by count before the key, vlen 0 = none.
func appendMilli(b []byte, shared bool, waitMs uint32, lease uint8, owner uint64, limit uint16, value []byte, key string) []byte {
	var flags byte
	if shared {
		flags = 1
	}
	b = append(b, opMilli, flags)
	b = binary.BigEndian.AppendUint32(b, waitMs)
	b = append(b, lease)
	b = binary.BigEndian.AppendUint64(b, owner)
	b = binary.BigEndian.AppendUint16(b, limit)
	b = binary.BigEndian.AppendUint16(b, uint16(len(value)))
	b = append(b, value...)
	b = append(b, key...)
	return append(b, '\n')
}

// appendValue encodes V token vlen value key (PROTOCOL.md 17.1).
func appendValue(b []byte, token uint64, value []byte, key string) []byte {
	b = append(b, opValue)
	b = binary.BigEndian.AppendUint64(b, token)
	b = binary.BigEndian.AppendUint16(b, uint16(len(value)))
	b = append(b, value...)
	b = append(b, key...)
	return append(b, '\n')
}

// appendObserve encodes O watch key (PROTOCOL.md 16.1).
func appendObserve(b []byte, watch uint64, key string) []byte {
	b = append(b, opObserve)
	b = binary.BigEndian.AppendUint64(b, watch)
	b = append(b, key...)
	return append(b, '\n')
}

// appendUnobserve encodes U watch (PROTOCOL.md 16.1): no key.
func appendUnobserve(b []byte, watch uint64) []byte {
	b = append(b, opUnobserve)
	b = binary.BigEndian.AppendUint64(b, watch)
	return append(b, '\n')
}

// appendWithdraw encodes W owner key (PROTOCOL.md 15.1).
func appendWithdraw(b []byte, owner uint64, key string) []byte {
	b = append(b, opWithdraw)
	b = binary.BigEndian.AppendUint64(b, owner)
	b = append(b, key...)
	return append(b, '\n')
}

// appendHello encodes H rev (PROTOCOL.md 14.1).
func appendHello(b []byte, rev uint16) []byte {
	b = append(b, opHello)
	b = binary.BigEndian.AppendUint16(b, rev)
	return append(b, '\n')
}

func appendPing(b []byte, nonce uint64) []byte {
	b = append(b, opPing)
	b = binary.BigEndian.AppendUint64(b, nonce)
	return append(b, '\n')
}

// answer is one decoded server frame.
type answer struct {
	op       byte
	id       uint64 // owner (A, T, B, L), token (R, E, N, C, V), nonce (P) or watch (O, U, B)
	token    uint64 // A and O
	queuedMs uint32 // A only
	limit    uint16 // L and O
	code     uint8  // X only
	message  string // X only
	// H only (PROTOCOL.md 14.1): the server's revision and limits
	rev           uint16
	maxWaitMs     uint32
	maxValueBytes uint16
	// O only (an event, PROTOCOL.md 16.2): the state byte, cause, flags, count and value
	state, cause, flags byte
	count               uint16
	value               []byte
}

// errProtocol marks a frame the client cannot decode: the session is unusable.
var errProtocol = errors.New("leasehold: protocol error")

// readAnswer reads one answer frame. It returns io.EOF (or the read error) when the stream ends.
func readAnswer(r *bufio.Reader) (answer, error) {
	op, err := r.ReadByte()
	if err != nil {
		return answer{}, err
	}
	var header int
	switch op {
	case opAcquire:
		header = 20
	case opTimeout, opBusy, opRelease, opExtend, opNotHeld, opCheck, opPing, opValue, opUnobserve:
		header = 8
	case opMismatch:
		header = 10
	case opHello:
		header = 8
	case opError:
		return readError(r)
	case opObserve:
		return readEvent(r)
	default:
		return answer{}, fmt.Errorf("%w: unknown answer op 0x%02X", errProtocol, op)
	}
	var buf [21]byte
	if _, err := io.ReadFull(r, buf[:header+1]); err != nil {
		return answer{}, unexpected(err)
	}
	if buf[header] != '\n' {
		return answer{}, fmt.Errorf("%w: answer %q not terminated by 0x0A", errProtocol, op)
	}
	if op == opHello {
		return answer{op: op, rev: binary.BigEndian.Uint16(buf[0:2]), maxWaitMs: binary.BigEndian.Uint32(buf[2:6]),
			maxValueBytes: binary.BigEndian.Uint16(buf[6:8])}, nil
	}
	a := answer{op: op, id: binary.BigEndian.Uint64(buf[0:8])}
	switch op {
	case opAcquire:
		a.token = binary.BigEndian.Uint64(buf[8:16])
		a.queuedMs = binary.BigEndian.Uint32(buf[16:20])
	case opMismatch:
		a.limit = binary.BigEndian.Uint16(buf[8:10])
	}
	return a, nil
}

// readEvent reads an event (PROTOCOL.md 16.1): a 25-byte header after the op, vlen bytes of
// value by count (0x0A included), then 0x0A.
func readEvent(r *bufio.Reader) (answer, error) {
	var h [25]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return answer{}, unexpected(err)
	}
	a := answer{op: opObserve, id: binary.BigEndian.Uint64(h[0:8]), state: h[8], cause: h[9], flags: h[10],
		token: binary.BigEndian.Uint64(h[11:19]), count: binary.BigEndian.Uint16(h[19:21]), limit: binary.BigEndian.Uint16(h[21:23])}
	if vlen := int(binary.BigEndian.Uint16(h[23:25])); vlen > 0 {
		a.value = make([]byte, vlen)
		if _, err := io.ReadFull(r, a.value); err != nil {
			return answer{}, unexpected(err)
		}
	}
	end, err := r.ReadByte()
	if err != nil {
		return answer{}, unexpected(err)
	}
	if end != '\n' {
		return answer{}, fmt.Errorf("%w: event not terminated by 0x0A", errProtocol)
	}
	return a, nil
}

func readError(r *bufio.Reader) (answer, error) {
	code, err := r.ReadByte()
	if err != nil {
		return answer{}, unexpected(err)
	}
	msg := make([]byte, 0, 32)
	for {
		c, err := r.ReadByte()
		if err != nil {
			return answer{}, unexpected(err)
		}
		if c == '\n' {
			break
		}
		if len(msg) > maxErrorMessage {
			return answer{}, fmt.Errorf("%w: error message longer than %d bytes", errProtocol, maxErrorMessage)
		}
		msg = append(msg, c)
	}
	return answer{op: opError, code: code, message: string(msg)}, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
