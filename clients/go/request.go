package leasehold

import (
	"fmt"
	"sync"
	"time"
)

// reqState is where a request is in PROTOCOL.md 9.4's terms.
type reqState int

const (
	stateQueued  reqState = iota // no byte handed to a socket: definitely not sent
	stateWriting                 // a write of its bytes began: possibly sent
	stateWritten                 // all its bytes were written: waits for its answer
)

// result is what a request ends with: for an Acquire the caller's outcome, for a token
// request or Ping one attempt's answer (or why the attempt failed).
type result struct {
	ticket *Ticket
	ans    answer
	err    error
	// retry: the attempt failed and nothing says it took effect twice (token requests, Pings).
	retry bool
}

// request is one request on its way: routed to a session, written, answered. An Acquire's
// request lives for the whole call (the same owner and D across sessions, 9.4); a Release,
// Extend, Check or Ping makes one request per attempt.
type request struct {
	op    byte
	key   string
	owner uint64 // Acquire
	token uint64 // Release, Extend, Check
	nonce uint64 // Ping
	lease uint8  // Acquire, Extend
	// shared and limit select the shared Acquire (S, PROTOCOL.md section 13).
	shared bool
	limit  uint16
	// waitZero: one immediate attempt (wire wait 0) under the transport deadline.
	waitZero bool
	// value: an exclusive Acquire's value (sent in its M) or a Proclaim's (V), section 17.
	value []byte
	// obs: the Observation whose subscription (O, owner = the watch id) this is (section 16).
	obs *Observation
	// deadline is D for an Acquire; for other requests the time after which it is not sent.
	deadline time.Time

	mu        sync.Mutex
	state     reqState
	sess      *session
	sendStart time.Time
	concluded bool
	done      chan result // buffered 1; receives exactly one result
}

func newRequest(op byte, key string, deadline time.Time) *request {
	return &request{op: op, key: key, deadline: deadline, done: make(chan result, 1)}
}

func (r *request) isAcquire() bool { return r.op == opAcquire || r.op == opShared }

// newWithdraw makes the W of an Acquire (9.14): written on the Acquire's session only, never
// answered itself (the Acquire's answer is), never moved to another session.
func newWithdraw(acq *request) *request {
	w := newRequest(opWithdraw, acq.key, time.Time{})
	w.owner = acq.owner
	return w
}

// The Op of an Acquire's or a shared Acquire's errors.
const (
	opNameAcquire = "acquire"
	opNameShared  = "acquire shared"
)

// name is the Op of the request's errors (Acquires only).
func (r *request) name() string {
	if r.shared {
		return opNameShared
	}
	return opNameAcquire
}

// concludeLocked delivers the request's one result. r.mu must be held.
func (r *request) concludeLocked(res result) bool {
	if r.concluded {
		return false
	}
	r.concluded = true
	r.done <- res
	return true
}

func (r *request) conclude(res result) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.concludeLocked(res)
}

// encoded is why encode wrote a request or not.
type encoded int

const (
	encodedOK      encoded = iota
	encodedLate            // D (or the request's deadline) passed: not sent
	encodedOverMax         // the wire wait would pass the session's max-wait (9.13): not sent
)

// cannotCarry says why a session of revision 1.4 or not (rev14) with maxValue (its H's
// max_value_bytes) cannot carry r (9.13: never send what a session rules out), or "".
func (r *request) cannotCarry(rev14 bool, maxValue int) string {
	needs14 := r.op == opValue || r.op == opObserve || len(r.value) > 0
	switch {
	case needs14 && !rev14:
		return "it needs a revision 1.4 session and this server speaks 1.3 (or ProtocolRevision is 1.3)"
	case len(r.value) > maxValue:
		return fmt.Sprintf("its value of %d bytes passes this session's max_value_bytes %d (the server's leasehold.max-value-bytes; 0 = values off)", len(r.value), maxValue)
	}
	return ""
}

// encode appends r's frame for a session of revision 1.4 (milli: an Acquire goes out as M) or
// 1.3 (A or S in whole seconds, 9.5); an Acquire's wire wait may be at most the session's
// maxWait: it is never cut short to fit (9.13).
func (r *request) encode(b []byte, now time.Time, milli bool, maxWait time.Duration) ([]byte, encoded) {
	switch r.op {
	case opAcquire, opShared:
		if !r.waitZero && r.deadline.Sub(now) > maxWait {
			return b, encodedOverMax
		}
		if milli {
			var waitMs uint32
			if !r.waitZero {
				w, ok := wireWaitMs(r.deadline, now)
				if !ok {
					return b, encodedLate
				}
				waitMs = w
			} else if !now.Before(r.deadline) {
				return b, encodedLate
			}
			return appendMilli(b, r.shared, waitMs, r.lease, r.owner, r.limit, r.value, r.key), encodedOK
		}
		var wait uint8
		if !r.waitZero {
			w, ok := wireWait(r.deadline, now)
			if !ok {
				return b, encodedLate
			}
			wait = w
		} else if !now.Before(r.deadline) {
			return b, encodedLate
		}
		if r.shared {
			return appendShared(b, wait, r.lease, r.owner, r.limit, r.key), encodedOK
		}
		return appendAcquire(b, wait, r.lease, r.owner, r.key), encodedOK
	case opWithdraw:
		return appendWithdraw(b, r.owner, r.key), encodedOK
	case opObserve: // no deadline: a subscription lasts as long as its observation (9.15.1)
		return appendObserve(b, r.owner, r.key), encodedOK
	case opUnobserve:
		return appendUnobserve(b, r.owner), encodedOK
	case opValue:
		if !now.Before(r.deadline) {
			return b, encodedLate
		}
		return appendValue(b, r.token, r.value, r.key), encodedOK
	case opPing:
		if !now.Before(r.deadline) {
			return b, encodedLate
		}
		return appendPing(b, r.nonce), encodedOK
	default:
		if !now.Before(r.deadline) {
			return b, encodedLate
		}
		return appendTokenRequest(b, r.op, r.lease, r.token, r.key), encodedOK
	}
}
