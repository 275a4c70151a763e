package leasehold

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// faultProxy is a fault-injecting TCP proxy for tests: it forwards each connection to the
// target and applies faults per direction to connections (live, or from their start where
// said): a delay, a stall (stop reading, so TCP backpressure builds), a cut after N bytes
// (forward exactly N bytes of that direction, then close both sockets; fixed when the
// connection is accepted), swallowing answers, refusing connections (the listener closes and
// reopens on the same port) and a delay before accepting. It parses what it forwards, so
// tests see the Acquires the server received (owner, wire wait), the Releases, and the grants.
type faultProxy struct {
	t      testing.TB
	target string
	addr   string

	mu            sync.Mutex
	ln            net.Listener
	closed        bool
	acceptDelay   time.Duration
	cutC2S        int64
	cutS2C        int64
	delayC2S      time.Duration
	delayS2C      time.Duration
	stallC2S      bool
	stallS2C      bool
	swallow       bool
	conns         []*proxyConn
	accepted      int
	acquireStarts int
	acquires      []seenAcquire
	releases      []uint64
	grants        map[uint64]uint64
	// rejectHello: a connection that opens with H is answered X 1 "unknown op 0x48" and closed,
	// as a 1.3 server does (PROTOCOL.md 14.1); hellos counts the H frames seen, rejected or not.
	rejectHello bool
	hellos      int
	withdraws   []uint64 // the owners of the W frames forwarded
	timeouts    []uint64 // the owners of the T answers forwarded
	observes    []uint64 // the watch ids of the O frames forwarded
	unobserves  []uint64 // the watch ids of the U frames forwarded
	values      []uint64 // the tokens of the V frames forwarded

	// parsers and idle count the parser goroutines, and those blocked reading for more bytes
	// (every complete frame they were given is recorded): see caughtUp.
	parsers atomic.Int64
	idle    atomic.Int64
}

// idleReader marks its parser idle while it waits in Read: bufio reads the pipe only once it
// has used up every complete frame it was given, so a parser inside Read has recorded them all.
type idleReader struct {
	r io.Reader
	p *faultProxy
}

func (ir idleReader) Read(b []byte) (int, error) {
	ir.p.idle.Add(1)
	defer ir.p.idle.Add(-1)
	return ir.r.Read(b)
}

// caughtUp waits (at most 2 s) until every parser has recorded what it was given. The pump hands
// bytes to a parser before it forwards them, but the parser records them on its own goroutine: an
// answer can reach the client before its request is recorded, so a count read right after the
// answers would miss some (seen: 5 of 23 acquires).
func (p *faultProxy) caughtUp() {
	deadline := time.Now().Add(2 * time.Second)
	for p.idle.Load() < p.parsers.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

type seenAcquire struct {
	owner  uint64
	wait   int // seconds (an M's wait_ms rounded up)
	waitMs int // an M's wait_ms
	milli  bool
	lease  int
	key    string
	shared bool // an S (shared Acquire) with its limit
	limit  int
}

type proxyConn struct {
	id             int
	client, server net.Conn
	once           sync.Once
	closed         chan struct{}
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.closed)
		c.client.Close()
		c.server.Close()
	})
}

func newProxy(t testing.TB, target string) *faultProxy {
	return newProxyWithBuffer(t, target, 0)
}

// newProxyWithBuffer sets the accepted connections' receive buffer (SO_RCVBUF, inherited from
// the listener) when rcvbuf > 0, so a stalled proxy makes the client's writes block sooner.
func newProxyWithBuffer(t testing.TB, target string, rcvbuf int) *faultProxy {
	lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		if rcvbuf <= 0 {
			return nil
		}
		var serr error
		c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
		return serr
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, target: target, addr: ln.Addr().String(), ln: ln, cutC2S: -1, cutS2C: -1, grants: map[uint64]uint64{}}
	go p.accept(ln)
	t.Cleanup(p.close)
	return p
}

func (p *faultProxy) set(f func(p *faultProxy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *faultProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.ln.Close()
	conns := p.conns
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// refuse closes the listener (connects are refused) or reopens it on the same port.
func (p *faultProxy) refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.ln.Close()
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("reopening the proxy on %s: %v", p.addr, err)
	}
	p.ln = ln
	go p.accept(ln)
}

func (p *faultProxy) closeAll() {
	p.mu.Lock()
	conns := p.conns
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

func (p *faultProxy) openConnections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		select {
		case <-c.closed:
		default:
			n++
		}
	}
	return n
}

// isOpen reports whether connection id (0 = the first accepted) is still open.
func (p *faultProxy) isOpen(id int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if c.id == id {
			select {
			case <-c.closed:
				return false
			default:
				return true
			}
		}
	}
	return false
}

func (p *faultProxy) stats() (accepted, starts int, acquires []seenAcquire, releases []uint64) {
	p.caughtUp()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted, p.acquireStarts, append([]seenAcquire(nil), p.acquires...), append([]uint64(nil), p.releases...)
}

func (p *faultProxy) grantedToken(owner uint64) (uint64, bool) {
	p.caughtUp()
	p.mu.Lock()
	defer p.mu.Unlock()
	tok, ok := p.grants[owner]
	return tok, ok
}

// timedOut: a T for owner went back to the client.
func (p *faultProxy) timedOut(owner uint64) bool {
	p.caughtUp()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.timeouts {
		if o == owner {
			return true
		}
	}
	return false
}

func (p *faultProxy) released(token uint64) bool {
	_, _, _, rel := p.stats()
	for _, r := range rel {
		if r == token {
			return true
		}
	}
	return false
}

func (p *faultProxy) accept(ln net.Listener) {
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		go p.serve(client)
	}
}

func (p *faultProxy) serve(client net.Conn) {
	p.mu.Lock()
	delay := p.acceptDelay
	p.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay) // the TCP connect succeeded; the session comes up late
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	if p.rejectHello {
		p.mu.Unlock()
		first, ok := p.answerHelloAsA13Server(client, server)
		if !ok {
			return
		}
		client = &prefixConn{Conn: client, prefix: first}
		p.mu.Lock()
	}
	c := &proxyConn{id: p.accepted, client: client, server: server, closed: make(chan struct{})}
	p.accepted++
	p.conns = append(p.conns, c)
	cutC2S, cutS2C := p.cutC2S, p.cutS2C
	p.mu.Unlock()
	c2s, s2c := p.parseRequests(), p.parseAnswers()
	go p.pump(c, client, server, cutC2S, true, c2s, func() (time.Duration, bool, bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.delayC2S, p.stallC2S, false
	})
	go p.pump(c, server, client, cutS2C, false, s2c, func() (time.Duration, bool, bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.delayS2C, p.stallS2C, p.swallow
	})
}

// answerHelloAsA13Server reads the connection's first byte: an H is answered as a 1.3 server
// does (X 1, then close); anything else is handed back to be forwarded.
func (p *faultProxy) answerHelloAsA13Server(client, server net.Conn) ([]byte, bool) {
	first := make([]byte, 1)
	if _, err := io.ReadFull(client, first); err != nil {
		client.Close()
		server.Close()
		return nil, false
	}
	if first[0] != 'H' {
		return first, true
	}
	rest := make([]byte, 3)
	io.ReadFull(client, rest)
	p.set(func(p *faultProxy) { p.hellos++ })
	client.Write([]byte("X\x01unknown op 0x48\n"))
	client.Close()
	server.Close()
	return nil, false
}

// prefixConn is a connection whose first bytes were already read: Read returns them first.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

type chunk struct {
	data []byte
	due  time.Time
}

// pump copies src to dst with the direction's faults. parsed receives the requests forwarded
// (fromClient), or every answer read (so a grant cut off is still seen).
func (p *faultProxy) pump(c *proxyConn, src, dst net.Conn, cut int64, fromClient bool, parsed *io.PipeWriter, faults func() (time.Duration, bool, bool)) {
	defer parsed.Close()
	out := make(chan chunk, 1024)
	go func() { // the forwarder: delivers each chunk when due
		for ch := range out {
			if d := time.Until(ch.due); d > 0 {
				select {
				case <-time.After(d):
				case <-c.closed:
					return
				}
			}
			if ch.data == nil {
				c.close()
				return
			}
			if _, err := dst.Write(ch.data); err != nil {
				c.close()
				return
			}
		}
	}()
	defer close(out)
	buf := make([]byte, 32*1024)
	var forwarded int64
	for {
		delay, stall, _ := faults()
		if stall {
			select {
			case <-c.closed:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		src.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := src.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			for { // a stall that began during the read holds these bytes back too
				if _, stall, _ := faults(); !stall {
					break
				}
				select {
				case <-c.closed:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
			delay, _, swallow := faults()
			due := time.Now().Add(delay)
			if cut >= 0 && forwarded+int64(n) > cut {
				if !fromClient {
					parsed.Write(data)
				}
				data = data[:cut-forwarded]
				forwarded = cut
				if fromClient {
					parsed.Write(data)
				}
				out <- chunk{data: data, due: due}
				out <- chunk{due: due} // then close both
				return
			}
			forwarded += int64(n)
			parsed.Write(data)
			if !swallow {
				out <- chunk{data: data, due: due}
			}
		}
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				select {
				case <-c.closed:
					return
				default:
					continue
				}
			}
			if fromClient { // the client closed: the server sees it at once (its waiters are dropped)
				c.close()
				return
			}
			out <- chunk{due: time.Now().Add(delay)} // the server closed: close the client's side after the data
			return
		}
	}
}

// parseRequests records the requests forwarded to the server.
func (p *faultProxy) parseRequests() *io.PipeWriter {
	pr, pw := io.Pipe()
	p.parsers.Add(1)
	go func() {
		defer p.parsers.Add(-1)
		defer pr.Close()
		r := bufio.NewReader(idleReader{pr, p})
		for {
			op, err := r.ReadByte()
			if err != nil {
				return
			}
			header := map[byte]int{'A': 10, 'R': 8, 'E': 9, 'C': 8, 'P': 8, 'S': 12, 'H': 2, 'M': 18, 'W': 8, 'V': 10, 'O': 8, 'U': 8}[op]
			if op == 'A' || op == 'S' || op == 'M' {
				p.set(func(p *faultProxy) { p.acquireStarts++ })
			}
			h := make([]byte, header)
			if _, err := io.ReadFull(r, h); err != nil {
				return
			}
			if op == 'H' {
				p.set(func(p *faultProxy) { p.hellos++ })
				r.ReadByte() // its terminator
				continue
			}
			if op == 'M' || op == 'V' { // its value, by count (vlen), before the key
				if _, err := io.CopyN(io.Discard, r, int64(binary.BigEndian.Uint16(h[len(h)-2:]))); err != nil {
					return
				}
			}
			rest, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			key := string(rest[:len(rest)-1])
			switch op {
			case 'A':
				a := seenAcquire{wait: int(h[0]), lease: int(h[1]), owner: binary.BigEndian.Uint64(h[2:10]), key: key}
				p.set(func(p *faultProxy) { p.acquires = append(p.acquires, a) })
			case 'S':
				a := seenAcquire{wait: int(h[0]), lease: int(h[1]), owner: binary.BigEndian.Uint64(h[2:10]),
					shared: true, limit: int(binary.BigEndian.Uint16(h[10:12])), key: key}
				p.set(func(p *faultProxy) { p.acquires = append(p.acquires, a) })
			case 'M':
				ms := int(binary.BigEndian.Uint32(h[1:5]))
				a := seenAcquire{waitMs: ms, wait: (ms + 999) / 1000, milli: true, lease: int(h[5]), owner: binary.BigEndian.Uint64(h[6:14]),
					shared: h[0]&1 == 1, limit: int(binary.BigEndian.Uint16(h[14:16])), key: key}
				p.set(func(p *faultProxy) { p.acquires = append(p.acquires, a) })
			case 'W':
				owner := binary.BigEndian.Uint64(h[0:8])
				p.set(func(p *faultProxy) { p.withdraws = append(p.withdraws, owner) })
			case 'R':
				tok := binary.BigEndian.Uint64(h[0:8])
				p.set(func(p *faultProxy) { p.releases = append(p.releases, tok) })
			case 'O':
				id := binary.BigEndian.Uint64(h[0:8])
				p.set(func(p *faultProxy) { p.observes = append(p.observes, id) })
			case 'U':
				id := binary.BigEndian.Uint64(h[0:8])
				p.set(func(p *faultProxy) { p.unobserves = append(p.unobserves, id) })
			case 'V':
				tok := binary.BigEndian.Uint64(h[0:8])
				p.set(func(p *faultProxy) { p.values = append(p.values, tok) })
			}
		}
	}()
	return pw
}

// parseAnswers records the grants the server sent (forwarded or not).
func (p *faultProxy) parseAnswers() *io.PipeWriter {
	pr, pw := io.Pipe()
	p.parsers.Add(1)
	go func() {
		defer p.parsers.Add(-1)
		defer pr.Close()
		in := idleReader{pr, p}
		r := bufio.NewReader(in)
		for {
			a, err := readAnswer(r)
			if err != nil {
				io.Copy(io.Discard, in)
				return
			}
			if a.op == opAcquire {
				p.set(func(p *faultProxy) { p.grants[a.id] = a.token })
			}
			if a.op == opTimeout {
				p.set(func(p *faultProxy) { p.timeouts = append(p.timeouts, a.id) })
			}
		}
	}()
	return pw
}

// watchFrames is what the proxy forwarded of observing and proclaiming: O and U watch ids, V tokens.
func (p *faultProxy) watchFrames() (observes, unobserves, values []uint64) {
	p.caughtUp()
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uint64(nil), p.observes...), append([]uint64(nil), p.unobserves...), append([]uint64(nil), p.values...)
}

// eventually waits (bounded) for cond, failing with what was waited for.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("waited %v for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s seenAcquire) String() string {
	if s.milli {
		return fmt.Sprintf("M owner=%d wait_ms=%d shared=%v limit=%d key=%s", s.owner, s.waitMs, s.shared, s.limit, s.key)
	}
	if s.shared {
		return fmt.Sprintf("S owner=%d wait=%d limit=%d key=%s", s.owner, s.wait, s.limit, s.key)
	}
	return fmt.Sprintf("A owner=%d wait=%d key=%s", s.owner, s.wait, s.key)
}
