package leasehold

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// session is one connection. Its writer goroutine connects (TCP, TLS, an opening Ping answered
// within ConnectTimeout) and then writes batches from its queue; its reader goroutine decodes
// answers and correlates them: Acquire by owner, Release/Extend/Check by token (FIFO per
// token), Ping by nonce.
type session struct {
	c     *Client
	slot  int
	addr  string
	delay time.Duration // back-off before connecting (the slot's failures)

	mu       sync.Mutex
	queue    []*request
	up       bool
	dead     bool
	conn     net.Conn
	acquires map[uint64]*request
	tokens   map[uint64][]*request
	pings    map[uint64]*request
	watches  map[uint64]*watchEntry // by watch id: the subscriptions (O) written on this session
	inflight int
	// rev14: the session's Hello was answered with revision 1.4 or above (9.13): acquires go
	// out as M, Withdraw is possible; maxWait is the server's max-wait then (255 s on 1.3).
	rev14    bool
	maxWait  time.Duration
	maxValue int // the H's max_value_bytes (0 on 1.3: values off, 17.5)
	wake     chan struct{}
	gone     chan struct{} // closed when the session is dead
}

func newSession(c *Client, slot int, addr string, delay time.Duration) *session {
	return &session{
		c: c, slot: slot, addr: addr, delay: delay,
		acquires: map[uint64]*request{},
		tokens:   map[uint64][]*request{},
		pings:    map[uint64]*request{},
		watches:  map[uint64]*watchEntry{},
		wake:     make(chan struct{}, 1),
		gone:     make(chan struct{}),
	}
}

// maxBatch bounds one write, as in the Java client: every request of a batch is possibly sent
// once its write starts, so a write that blocks (a stalled server) must not take the whole
// queue with it; the requests still queued stay unsent and end Unavailable at their deadline.
const maxBatch = 256

// enqueue adds r to the queue; false when the session is already dead.
func (s *session) enqueue(r *request) bool {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return false
	}
	s.queue = append(s.queue, r)
	s.inflight++
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

func (s *session) load() (up bool, inflight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up, s.inflight
}

// run is the writer goroutine.
func (s *session) run() {
	defer s.c.wg.Done()
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-s.gone:
			return
		}
	}
	conn, reader, err := s.connect()
	if err != nil {
		s.c.connectFailed(s, err)
		s.fail(fmt.Errorf("session to %s did not come up: %w", s.addr, err), false, "", "")
		return
	}
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conn = conn
	s.up = true
	s.mu.Unlock()
	s.c.connected(s)
	s.c.wg.Add(1)
	go s.read(reader)
	var buf []byte
	more := false // the queue held more than one batch: write the next without waiting for a wake
	for {
		if !more {
			select {
			case <-s.wake:
			case <-s.gone:
				return
			}
		}
		s.mu.Lock()
		batch := s.queue
		more = len(batch) > maxBatch
		if more {
			batch, s.queue = batch[:maxBatch:maxBatch], batch[maxBatch:]
		} else {
			s.queue = nil
		}
		s.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		buf = buf[:0]
		var sent []*request
		for _, r := range batch {
			var ok bool
			buf, ok = s.prepare(r, buf)
			if ok {
				sent = append(sent, r)
			}
		}
		if len(sent) == 0 {
			continue
		}
		if _, err := conn.Write(buf); err != nil {
			s.fail(fmt.Errorf("write to %s: %w", s.addr, err), false, "", "")
			return
		}
		for _, r := range sent {
			r.mu.Lock()
			if r.sess == s && r.state == stateWriting {
				r.state = stateWritten
			}
			r.mu.Unlock()
		}
	}
}

// prepare checks r just before the write: not concluded, D not passed (else Unavailable),
// the wire wait recomputed from the time left; it registers r for its answer and marks it
// possibly sent. False when r is not to be written.
func (s *session) prepare(r *request, buf []byte) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.concluded {
		s.dequeued()
		return buf, false
	}
	now := s.c.now()
	out, enc := r.encode(buf, now, s.rev14, s.maxWait)
	if r.op == opWithdraw || r.op == opUnobserve {
		// never answered itself and never registered: the Acquire's answer is the outcome (W);
		// a U's answer ends a watch the client already forgot (16.1)
		s.dequeued()
		if s.isDead() {
			return buf, false
		}
		return out, true
	}
	if enc != encodedOK {
		s.dequeued()
		switch {
		case enc == encodedOverMax:
			r.concludeLocked(result{err: newError(ErrUnavailable, r.name(), r.key,
				fmt.Sprintf("its wait passes this session's maximum wait %v (the server's max-wait; 255 s on a 1.3 server): a longer wait needs a server configured for it", s.maxWait), nil)})
		case r.isAcquire():
			r.concludeLocked(result{err: newError(ErrUnavailable, r.name(), r.key, "its deadline passed before a session could send it", nil)})
		default:
			r.concludeLocked(result{err: errDeadlineUnsent, retry: true})
		}
		return buf, false
	}
	if why := r.cannotCarry(s.rev14, s.maxValue); why != "" { // 9.13: never sent, so no X 1 or X 3
		s.dequeued()
		s.refuseLocked(r, why)
		return buf, false
	}
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		// never written: it goes to another session (the session's failure re-routes its queue,
		// but this one had left the queue already)
		go s.c.route(r)
		return buf, false
	}
	switch r.op {
	case opAcquire, opShared:
		s.acquires[r.owner] = r
	case opPing:
		s.pings[r.nonce] = r
	case opObserve:
		s.watches[r.owner] = &watchEntry{r: r}
	default:
		s.tokens[r.token] = append(s.tokens[r.token], r)
	}
	s.mu.Unlock()
	r.state = stateWriting
	r.sess = s
	r.sendStart = now
	return out, true
}

var errDeadlineUnsent = errors.New("deadline passed before the request was sent")

func (s *session) isDead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

func (s *session) dequeued() {
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
}

// connect opens the session (9.13): with Hello unless the client is pinned to 1.3 or the
// address answered X 1 to a Hello since its last failed session, else with the Ping check. A
// 1.3 server answers H with X 1 and closes; in auto mode the address is then marked 1.3 and
// the session opens again with a Ping (it carried nothing else, so nothing is lost).
func (s *session) connect() (net.Conn, *bufio.Reader, error) {
	mode := s.c.opts.ProtocolRevision
	hello := mode != Revision13 && !s.c.isLegacy(s.addr)
	conn, reader, err := s.open(hello)
	var serr *ServerError
	if hello && errors.As(err, &serr) && serr.Code == 1 {
		if mode == Revision14 {
			return nil, nil, fmt.Errorf("the server does not speak revision 1.4 (ProtocolRevision %q): %w", mode, err)
		}
		s.c.markLegacy(s.addr)
		return s.open(false)
	}
	return conn, reader, err
}

// open connects (TCP, TLS) and sends the opening H or Ping alone, reading its answer within
// ConnectTimeout: a peer that accepts TCP but does not answer never takes a request.
func (s *session) open(hello bool) (net.Conn, *bufio.Reader, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.c.opts.ConnectTimeout)
	defer cancel()
	go func() { // a session ended meanwhile (Close, a deadline) stops its connect
		select {
		case <-s.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok && s.c.opts.writeBuffer > 0 {
		tc.SetWriteBuffer(s.c.opts.writeBuffer)
	}
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if s.c.opts.TLS != nil {
		cfg := s.c.opts.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(s.addr)
			cfg.ServerName = host
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("TLS handshake with %s failed: %w", s.addr, err)
		}
		conn = tc
	}
	nonce := s.c.nextID()
	opening, what, want := appendPing(nil, nonce), "ping", byte(opPing)
	if hello {
		opening, what, want = appendHello(nil, revision14), "hello", opHello
	}
	if _, err := conn.Write(opening); err != nil {
		conn.Close()
		return nil, nil, err
	}
	reader := bufio.NewReaderSize(conn, 32*1024)
	a, err := readAnswer(reader)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("no answer to the opening %s: %w", what, err)
	}
	if a.op == opError {
		conn.Close()
		return nil, nil, &ServerError{Code: int(a.code), Message: a.message}
	}
	if a.op != want || (!hello && a.id != nonce) {
		conn.Close()
		return nil, nil, fmt.Errorf("%w: unexpected answer %q to the opening %s", errProtocol, a.op, what)
	}
	s.mu.Lock()
	s.rev14, s.maxWait, s.maxValue = hello && a.rev >= revision14, maxWait13, 0
	if s.rev14 {
		s.maxWait = time.Duration(a.maxWaitMs) * time.Millisecond
		s.maxValue = int(a.maxValueBytes)
	}
	s.mu.Unlock()
	conn.SetDeadline(time.Time{})
	return conn, reader, nil
}

// is14 reports whether s speaks revision 1.4 (its Hello was answered so).
func (s *session) is14() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev14
}

// withdraw queues W for r, an Acquire written or being written on s (9.14: behind its bytes); false when s is a 1.3 session
// or already dead.
func (s *session) withdraw(r *request) bool {
	return s.is14() && s.enqueue(newWithdraw(r))
}

// read is the reader goroutine.
func (s *session) read(r *bufio.Reader) {
	defer s.c.wg.Done()
	for {
		a, err := readAnswer(r)
		if err != nil {
			s.fail(fmt.Errorf("session to %s broke: %w", s.addr, err), false, "", "")
			return
		}
		if a.op == opError {
			serr := &ServerError{Code: int(a.code), Message: a.message}
			hint := leaderHint(a.message)
			refused := ""
			if a.code == 7 {
				refused = a.message
			}
			s.fail(fmt.Errorf("session to %s closed by the server: %w", s.addr, serr), a.code == 8, hint, refused)
			return
		}
		s.dispatch(a)
	}
}

func leaderHint(message string) string {
	if strings.HasPrefix(message, "leader=") {
		return strings.TrimPrefix(message, "leader=")
	}
	return ""
}

func (s *session) dispatch(a answer) {
	if a.op == opObserve || a.op == opUnobserve || (a.op == opBusy && s.isWatch(a.id)) {
		s.watchAnswered(a)
		return
	}
	var r *request
	s.mu.Lock()
	switch a.op {
	case opAcquire, opTimeout, opBusy, opMismatch:
		r = s.acquires[a.id]
		delete(s.acquires, a.id)
	case opPing:
		r = s.pings[a.id]
		delete(s.pings, a.id)
	case opHello:
		// only the opening Hello is sent, and connect reads its answer
	default:
		if q := s.tokens[a.id]; len(q) > 0 {
			r = q[0]
			if len(q) == 1 {
				delete(s.tokens, a.id)
			} else {
				s.tokens[a.id] = q[1:]
			}
		}
	}
	if r != nil {
		s.inflight--
	}
	s.mu.Unlock()
	if r == nil {
		return // an answer nobody waits for (cannot happen with a conforming server)
	}
	if r.isAcquire() {
		s.c.acquireAnswered(r, a)
		return
	}
	r.conclude(result{ans: a})
}

// fail ends the session once: closes the connection and settles every request it had.
// notExecuted (X 8) means the server executed nothing of the session: its requests may be sent
// again elsewhere (9.12). refused is the message of an X 7: the Acquires whose key it names
// exactly are Forbidden (9.1). Requests never written move to another session (9.4).
func (s *session) fail(cause error, notExecuted bool, hint, refused string) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return
	}
	s.dead = true
	close(s.gone)
	conn := s.conn
	queue := s.queue
	var pending []*request
	for _, r := range s.acquires {
		pending = append(pending, r)
	}
	for _, q := range s.tokens {
		pending = append(pending, q...)
	}
	for _, r := range s.pings {
		pending = append(pending, r)
	}
	watches := s.watches
	s.queue, s.acquires, s.tokens, s.pings, s.watches = nil, nil, nil, nil, nil
	s.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	s.c.sessionEnded(s, notExecuted, hint, cause)
	for _, r := range queue {
		switch r.op {
		case opWithdraw, opUnobserve: // they name this session's waiters and watches only
		case opObserve: // a subscription that failed: its observation is told (9.15.3)
			s.subscriptionFailed(r, cause, notExecuted)
		default:
			s.c.route(r)
		}
	}
	s.watchesEnded(watches, cause, notExecuted, refused)
	for _, r := range pending {
		s.settleBroken(r, cause, notExecuted, refused)
	}
}

func (s *session) settleBroken(r *request, cause error, notExecuted bool, refused string) {
	r.mu.Lock()
	if r.concluded || r.sess != s {
		r.mu.Unlock()
		return
	}
	if notExecuted || r.state == stateQueued {
		r.state, r.sess = stateQueued, nil
		r.mu.Unlock()
		s.c.route(r)
		return
	}
	if r.isAcquire() && refused != "" && forbids(refused, r.key) {
		// the server refused the key before executing anything of it: no grant exists (9.1)
		r.concludeLocked(result{err: newError(ErrForbidden, r.name(), r.key, "the server does not let this client use the key", cause)})
	} else if r.isAcquire() {
		r.concludeLocked(result{err: newError(ErrIndeterminate, r.name(), r.key, "possibly sent, then its session ended", cause)})
	} else {
		r.concludeLocked(result{err: cause, retry: true})
	}
	r.mu.Unlock()
}

// close ends the session from the client's side (a deadline, a give-up, Close).
func (s *session) close(cause error) { s.fail(cause, false, "", "") }

// unanswered reports whether the Acquire of owner is still registered on s (no answer yet).
func (s *session) unanswered(owner uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.acquires[owner]
	return ok && !s.dead
}
