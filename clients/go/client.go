// Package leasehold is the Go client of the Leasehold lock server: fenced, FIFO, leased locks
// with the client rules of docs/PROTOCOL.md section 9 (one deadline per call, the wire wait
// recomputed, Indeterminate instead of a guess, the Ticket gate with a compensating release,
// wait = 0 under its own transport deadline). Standard library only.
//
// A Client is safe for concurrent use; every blocking call takes a context.Context. A context
// that ends early is an early deadline with section 9's consequences: nothing sent gives
// ErrUnavailable, anything possibly sent gives ErrIndeterminate (and a grant that still
// arrives is released by its exact token). A context cancelled while an Acquire waits in the
// server's queue on a revision 1.4 session also withdraws it (PROTOCOL.md 9.14), so no orphaned
// waiter stays ahead of live ones.
package leasehold

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Client is a pool of pipelined sessions to one server or a cluster.
type Client struct {
	opts Options
	now  func() time.Time // the one clock every decision by time reads (tests move it)
	ids  uint64           // owners and nonces: unique among the client's in-flight requests
	// compensate releases a grant nobody will use (the gate, 9.7); a field so tests see it
	compensate func(key string, token uint64, until time.Time)

	wg       sync.WaitGroup
	closedCh chan struct{}

	mu       sync.Mutex
	closed   bool
	slots    []slot
	leader   string // the leader a follower named (X 8, X 9); new sessions go there
	x8streak int    // X 8 answers in a row: the back-off of leader discovery
	lastErr  error  // the last connection failure, quoted by Unavailable
	// legacy: addresses whose server answered X 1 to Hello (a 1.3 server, 9.13): their
	// sessions open with Ping and send 1.3 frames until a session to them fails.
	legacy map[string]bool
}

type slot struct {
	s        *session
	addrIdx  int
	failures int
	delay    time.Duration
}

// New makes a client. It connects on first use.
func New(opts Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, err
	}
	c := &Client{opts: o, now: time.Now, closedCh: make(chan struct{}), slots: make([]slot, o.PoolSize),
		legacy: map[string]bool{}}
	c.compensate = c.releaseInBackground
	c.ids = binary.BigEndian.Uint64(seed[:]) >> 1
	for i := range c.slots {
		c.slots[i].addrIdx = i
	}
	return c, nil
}

func (c *Client) nextID() uint64 { return atomic.AddUint64(&c.ids, 1) }

// Acquire asks for key's exclusive lock: wait is how long it may wait in the key's FIFO queue
// (0 to 3600 s, kept to the millisecond; 0 = one immediate attempt; a wait longer than the
// server's max-wait, 255 s by default and on 1.3 servers, is not sent: ErrUnavailable, 9.13),
// lease how long the grant
// lasts (whole seconds, 1 to 255). It returns a Ticket, or an error matching ErrTimedOut,
// ErrBusy, ErrUnavailable, ErrIndeterminate, ErrForbidden, ErrClosed or
// ErrInvalidArgument.
//
// The call's deadline D is start + wait (start + TransportDeadline for wait = 0). A context
// deadline L earlier than D + ResponseGrace moves D to L − ResponseGrace (or to L when that is
// already past), so the server's answer can still come before L. The call returns by
// D + ResponseGrace at the latest. On a revision 1.4 session (PROTOCOL.md 9.13) the wait goes
// out in milliseconds (M), so a 200 ms wait is answered after 200 ms, not a second; on a 1.3
// session it is rounded up to whole seconds (A).
//
// A cancelled context ends the call at once (ErrUnavailable if nothing was written, else
// ErrIndeterminate, both matching context.Canceled). On a 1.4 session an acquire waiting in the
// server's queue is also withdrawn (W, 9.14): the server drops the waiter, and a grant that
// came first is released by its exact token, without the caller.
//
// WithValue gives the grant a value (PROTOCOL.md section 17), shown to observers with its token.
func (c *Client) Acquire(ctx context.Context, key string, wait, lease time.Duration, opts ...AcquireOption) (*Ticket, error) {
	value, err := acquireValue(opNameAcquire, key, false, opts)
	if err != nil {
		return nil, err
	}
	return c.acquire(ctx, key, wait, lease, false, 0, value)
}

// AcquireShared asks for one of key's shared holds (PROTOCOL.md section 13). limit 0 makes the
// key a read lock: many shared holders at once (up to the server's max-shared-holders-per-key),
// none while an Acquire of the same key (the write lock) holds it. limit N (1 to 65535) makes it
// a semaphore of N permits: at most N shared holders at once. Every holder of a key must ask
// with the same limit. wait and lease are those of Acquire, and so is everything else: the
// queue is one FIFO of shared and exclusive waiters (a reader never overtakes a queued
// writer), and the grant is a *Ticket with its own fencing token and lease, released,
// extended, checked and kept alive by that token alone.
//
// It returns a Ticket, or an error matching ErrTimedOut, ErrBusy, ErrUnavailable,
// ErrIndeterminate, ErrForbidden, ErrClosed, ErrInvalidArgument (a limit outside 0 to 65535,
// before anything is sent) or ErrLimitMismatch: the key's shared holds use another limit
// (definitive, no grant exists, never retried; errors.As gives a *LimitMismatchError with both
// limits). A limit above the server's max-shared-holders-per-key is answered X 3, which closes
// the session: ErrIndeterminate with a *ServerError of Code 3 as its cause. The deadlines are
// Acquire's. A shared grant has no value: WithValue is ErrInvalidArgument here.
func (c *Client) AcquireShared(ctx context.Context, key string, limit int, wait, lease time.Duration, opts ...AcquireOption) (*Ticket, error) {
	if limit < 0 || limit > 65535 {
		return nil, newError(ErrInvalidArgument, opNameShared, key, fmt.Sprintf("limit %d is not within 0 to 65535", limit), nil)
	}
	if _, err := acquireValue(opNameShared, key, true, opts); err != nil {
		return nil, err
	}
	return c.acquire(ctx, key, wait, lease, true, uint16(limit), nil)
}

func (c *Client) acquire(ctx context.Context, key string, wait, lease time.Duration, shared bool, limit uint16, value []byte) (*Ticket, error) {
	name := opNameAcquire
	if shared {
		name = opNameShared
	}
	if msg := validKey(key); msg != "" {
		return nil, newError(ErrInvalidArgument, name, key, msg, nil)
	}
	if wait < 0 || wait > maxCallerWait {
		return nil, newError(ErrInvalidArgument, name, key, fmt.Sprintf("wait %v is not within 0 to %v", wait, maxCallerWait), nil)
	}
	leaseSec, err := wholeSeconds(lease, 1, "lease")
	if err != nil {
		return nil, newError(ErrInvalidArgument, name, key, err.Error(), nil)
	}
	start := c.now()
	r := newRequest(opAcquire, key, time.Time{})
	if shared {
		r.op, r.shared, r.limit = opShared, true, limit
	}
	r.owner = c.nextID()
	r.lease, r.value = leaseSec, value
	if wait == 0 {
		r.waitZero = true
		r.deadline = start.Add(c.opts.TransportDeadline)
	} else {
		// kept to the millisecond, finer parts rounded up (9.13): 1.4 sessions send it as wait_ms
		r.deadline = start.Add((wait + time.Millisecond - 1) / time.Millisecond * time.Millisecond)
	}
	if l, ok := ctx.Deadline(); ok && l.Before(r.deadline.Add(c.opts.ResponseGrace)) {
		if early := l.Add(-c.opts.ResponseGrace); early.After(start) {
			r.deadline = early
		} else if l.Before(r.deadline) {
			r.deadline = l
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, newError(ErrUnavailable, name, key, "the context ended before it was sent", err)
	}
	c.route(r)
	return c.awaitAcquire(ctx, r)
}

func (c *Client) lastConnectError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// releaseInBackground releases a grant nobody will use, retried until its lease would have ended.
func (c *Client) releaseInBackground(key string, token uint64, until time.Time) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.tokenCall(context.Background(), opRelease, key, token, 0, until)
	}()
}

// route gives r to the least loaded session that is up, else one connecting, else a new one.
func (c *Client) route(r *request) {
	for {
		r.mu.Lock()
		concluded := r.concluded
		r.mu.Unlock()
		if concluded {
			return
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			if r.isAcquire() {
				r.conclude(result{err: newError(ErrUnavailable, r.name(), r.key, "the client was closed before it was sent", ErrClosed)})
			} else {
				r.conclude(result{err: ErrClosed})
			}
			return
		}
		s := c.pickLocked()
		c.mu.Unlock()
		if s.enqueue(r) {
			return
		}
	}
}

func (c *Client) pickLocked() *session {
	var best *session
	bestUp, bestLoad := false, 0
	empty := -1
	for i := range c.slots {
		s := c.slots[i].s
		if s == nil {
			if empty < 0 {
				empty = i
			}
			continue
		}
		up, load := s.load()
		if best == nil || (up && !bestUp) || (up == bestUp && load < bestLoad) {
			best, bestUp, bestLoad = s, up, load
		}
	}
	if best == nil {
		return c.startLocked(empty)
	}
	if bestUp && bestLoad > 0 && empty >= 0 {
		c.startLocked(empty) // open the pool's next session for the load to come
	}
	return best
}

func (c *Client) startLocked(i int) *session {
	sl := &c.slots[i]
	addr := c.leader
	if addr == "" {
		addr = c.opts.Servers[sl.addrIdx%len(c.opts.Servers)]
	}
	s := newSession(c, i, addr, sl.delay)
	sl.s = s
	c.wg.Add(1)
	go s.run()
	return s
}

func (c *Client) connectFailed(s *session, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sl := &c.slots[s.slot]
	c.lastErr = err
	delete(c.legacy, s.addr) // the next session there asks with Hello again (9.13)
	if s.addr == c.leader {
		c.leader = ""
	}
	sl.failures++
	sl.addrIdx++
	n := len(c.opts.Servers)
	if sl.failures >= n { // a full round failed: back off, 100 ms doubling to 1 s
		d := 100 * time.Millisecond << uint(minInt(sl.failures/n-1, 4))
		if d > time.Second {
			d = time.Second
		}
		sl.delay = d
	}
}

func (c *Client) connected(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sl := &c.slots[s.slot]
	sl.failures, sl.delay = 0, 0
	c.lastErr = nil
}

// sessionEnded frees s's slot and applies what the server said about the leader (9.12).
func (c *Client) sessionEnded(s *session, notExecuted bool, hint string, cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sl := &c.slots[s.slot]
	if sl.s == s {
		sl.s = nil
	}
	delete(c.legacy, s.addr) // the next session there asks with Hello again (9.13)
	if notExecuted {
		c.lastErr = cause // an X 8: quoted by an Unavailable that follows (no leader found)
	}
	if hint == s.addr {
		hint = "" // a hint naming the node that answered is ignored
	}
	if hint != "" {
		c.leader = hint
	}
	if !notExecuted {
		return
	}
	c.x8streak++
	if hint != "" {
		sl.delay = 0
		if c.x8streak%3 == 0 { // named leaders that also answer X 8: an election is running
			sl.delay = 250 * time.Millisecond
		}
		return
	}
	// no leader known: the next seed, 50 ms doubling to 500 ms
	c.leader = ""
	sl.addrIdx++
	d := 50 * time.Millisecond << uint(minInt(c.x8streak-1, 4))
	if d > 500*time.Millisecond {
		d = 500 * time.Millisecond
	}
	sl.delay = d
}

func (c *Client) isLegacy(addr string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.legacy[addr]
}

func (c *Client) markLegacy(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.legacy[addr] = true
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// Close ends every session: unanswered Acquires are Indeterminate, queued ones Unavailable,
// keep-alives report ErrClosed. It waits up to 2 s for the client's goroutines.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closedCh)
	var sessions []*session
	for _, sl := range c.slots {
		if sl.s != nil {
			sessions = append(sessions, sl.s)
		}
	}
	c.mu.Unlock()
	for _, s := range sessions {
		s.close(ErrClosed)
	}
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	return nil
}
