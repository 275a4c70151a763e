package leasehold

import (
	"errors"
	"testing"
	"time"
)

// The Ticket gate (PROTOCOL.md 9.7) and the validity (9.6) at their exact boundaries, on a
// clock the test sets; no sockets.

type released struct {
	key   string
	token uint64
	until time.Time
}

func gateClient(t *testing.T, now *time.Time) (*Client, *[]released) {
	c, err := New(Options{Servers: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	var rel []released
	c.now = func() time.Time { return *now }
	c.compensate = func(key string, token uint64, until time.Time) { rel = append(rel, released{key, token, until}) }
	return c, &rel
}

func sentAcquire(start time.Time, wait time.Duration, lease uint8) *request {
	r := newRequest(opAcquire, "k", start.Add(wait))
	r.owner, r.lease = 7, lease
	r.state, r.sendStart = stateWritten, start.Add(100*time.Millisecond)
	return r
}

func TestAGrantJustBeforeTheDeadlineIsDeliveredWithItsValidity(t *testing.T) {
	start := time.Unix(5000, 0)
	now := start.Add(10*time.Second - time.Nanosecond) // D − 1 ns
	c, rel := gateClient(t, &now)
	r := sentAcquire(start, 10*time.Second, 30)
	c.acquireAnswered(r, answer{op: opAcquire, id: 7, token: 42, queuedMs: 9000})
	res := <-r.done
	if res.err != nil || res.ticket == nil || len(*rel) != 0 {
		t.Fatalf("want a ticket, got %v (releases %v)", res.err, *rel)
	}
	// sendStart + queued + lease − max(50 ms, 1 % of (queued + lease))
	want := r.sendStart.Add(9*time.Second + 30*time.Second - 390*time.Millisecond)
	if got := res.ticket.ValidUntil(); !got.Equal(want) {
		t.Fatalf("validUntil %v, want %v", got, want)
	}
}

func TestAGrantAtTheDeadlineIsReleasedByItsTokenAndIndeterminate(t *testing.T) {
	start := time.Unix(5000, 0)
	now := start.Add(10 * time.Second) // exactly D
	c, rel := gateClient(t, &now)
	r := sentAcquire(start, 10*time.Second, 30)
	c.acquireAnswered(r, answer{op: opAcquire, id: 7, token: 42})
	res := <-r.done
	if !errors.Is(res.err, ErrIndeterminate) || res.ticket != nil {
		t.Fatalf("want Indeterminate, got %v", res.err)
	}
	if len(*rel) != 1 || (*rel)[0].token != 42 || !(*rel)[0].until.After(now.Add(30*time.Second)) {
		t.Fatalf("want one compensating release of token 42 until the lease's end, got %v", *rel)
	}
}

func TestAGrantPastItsValidityBeforeTheDeadlineIsNotDelivered(t *testing.T) {
	start := time.Unix(5000, 0)
	c, rel := gateClient(t, &start)
	r := sentAcquire(start, 60*time.Second, 1)
	// queued 950 ms of a 1 s lease: validUntil = sendStart + 1.95 s − 50 ms = start + 2.0 s
	now := start.Add(2 * time.Second)
	c.now = func() time.Time { return now }
	c.acquireAnswered(r, answer{op: opAcquire, id: 7, token: 43, queuedMs: 950})
	if res := <-r.done; !errors.Is(res.err, ErrIndeterminate) || len(*rel) != 1 {
		t.Fatalf("want Indeterminate and a release, got %v, %v", res.err, *rel)
	}
}

func TestAGrantForACallThatEndedIsReleased(t *testing.T) {
	start := time.Unix(5000, 0)
	c, rel := gateClient(t, &start)
	r := sentAcquire(start, 10*time.Second, 30)
	r.conclude(result{err: newError(ErrIndeterminate, "acquire", "k", "the context ended", nil)})
	<-r.done
	c.acquireAnswered(r, answer{op: opAcquire, id: 7, token: 44})
	if len(*rel) != 1 || (*rel)[0].token != 44 {
		t.Fatalf("want the late grant released, got %v", *rel)
	}
	select {
	case res := <-r.done:
		t.Fatalf("a second outcome was delivered: %v", res)
	default:
	}
}

func TestTimedOutAndBusyStayDefinitiveAfterTheDeadline(t *testing.T) {
	start := time.Unix(5000, 0)
	now := start.Add(11 * time.Second) // past D, within the grace
	c, _ := gateClient(t, &now)
	for op, want := range map[byte]error{opTimeout: ErrTimedOut, opBusy: ErrBusy} {
		r := sentAcquire(start, 10*time.Second, 30)
		c.acquireAnswered(r, answer{op: op, id: 7})
		if res := <-r.done; !errors.Is(res.err, want) {
			t.Fatalf("%c: want %v, got %v", op, want, res.err)
		}
	}
}

func TestALimitMismatchStaysDefinitiveAfterTheDeadline(t *testing.T) {
	start := time.Unix(5000, 0)
	now := start.Add(11 * time.Second) // past D, within the grace
	c, rel := gateClient(t, &now)
	r := sentAcquire(start, 10*time.Second, 30)
	r.op, r.shared, r.limit = opShared, true, 4
	c.acquireAnswered(r, answer{op: opMismatch, id: 7, limit: 0})
	res := <-r.done
	var lm *LimitMismatchError
	if !errors.Is(res.err, ErrLimitMismatch) || !errors.As(res.err, &lm) || lm.Requested != 4 || lm.KeyLimit != 0 || len(*rel) != 0 {
		t.Fatalf("want ErrLimitMismatch{4, 0} and no release, got %v (releases %v)", res.err, *rel)
	}
}
