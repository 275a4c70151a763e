package leasehold

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// Options configures a Client. Zero fields take the defaults below.
type Options struct {
	// Servers are the server addresses, host:port (port 7420 when omitted). For a cluster give
	// every node (a seed list): the client finds the leader (PROTOCOL.md 9.12).
	Servers []string
	// PoolSize is how many sessions (connections) the client opens at most, on demand; requests
	// are pipelined on them. Default 2.
	PoolSize int
	// ConnectTimeout bounds a session's TCP connect, TLS handshake and opening Ping. A session
	// not up by then never took a request. Default 2 s.
	ConnectTimeout time.Duration
	// TransportDeadline is the deadline D of a wait = 0 Acquire (still one immediate attempt on
	// the server), of a Ping, and the default retry time of Check. Default 5 s.
	TransportDeadline time.Duration
	// ResponseGrace is how long after D a sent Acquire may still be answered; then its session
	// is closed and the outcome is Indeterminate. It is also how long a Release, Extend or Check
	// attempt waits for its answer before its session is given up. Default 2 s.
	ResponseGrace time.Duration
	// MarginFloor is the smallest lease safety margin. Default 50 ms.
	MarginFloor time.Duration
	// DriftRate is the assumed worst clock-rate difference between client and server:
	// margin = max(MarginFloor, DriftRate × (queued + lease)). Default 0.01.
	DriftRate float64
	// TLS, when set, makes every session TLS (set Certificates for mutual TLS). An empty
	// ServerName is filled with the host of the address dialled, so hostnames are verified.
	TLS *tls.Config
	// ProtocolRevision pins what the client speaks (PROTOCOL.md 9.13). RevisionAuto (the
	// default, "" or "auto") opens each session with Hello (H) and sends revision 1.4 frames
	// (millisecond waits in M, Withdraw W) where the server answers 1.4, else falls back to 1.3
	// frames for that address until a session to it fails. Revision13 ("1.3") never sends H or
	// any 1.4 frame. Revision14 ("1.4") requires 1.4: an address whose server answers H with
	// X 1 is unusable (a request that could only go there ends ErrUnavailable).
	ProtocolRevision string

	// writeBuffer, when above 0, caps each session socket's send buffer (SO_SNDBUF). Tests only:
	// a stalled server then blocks a write after a known, small number of bytes, whatever the
	// kernel's autotuning would have absorbed.
	writeBuffer int
}

const defaultPort = "7420"

// The values of Options.ProtocolRevision.
const (
	RevisionAuto = "auto"
	Revision13   = "1.3"
	Revision14   = "1.4"
)

func (o Options) withDefaults() (Options, error) {
	if len(o.Servers) == 0 {
		return o, fmt.Errorf("%w: no server addresses", ErrInvalidArgument)
	}
	servers := make([]string, len(o.Servers))
	for i, s := range o.Servers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(s, defaultPort)
			if _, _, err := net.SplitHostPort(s); err != nil {
				return o, fmt.Errorf("%w: server address %q: %v", ErrInvalidArgument, o.Servers[i], err)
			}
		}
		servers[i] = s
	}
	o.Servers = servers
	switch o.ProtocolRevision {
	case "":
		o.ProtocolRevision = RevisionAuto
	case RevisionAuto, Revision13, Revision14:
	default:
		return o, fmt.Errorf("%w: ProtocolRevision %q is not %q, %q or %q", ErrInvalidArgument, o.ProtocolRevision, RevisionAuto, Revision13, Revision14)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 2
	}
	def(&o.ConnectTimeout, 2*time.Second)
	def(&o.TransportDeadline, 5*time.Second)
	def(&o.ResponseGrace, 2*time.Second)
	def(&o.MarginFloor, 50*time.Millisecond)
	if o.DriftRate <= 0 {
		o.DriftRate = 0.01
	}
	return o, nil
}

// margin is the lease safety margin of PROTOCOL.md 9.6 over the whole interval queued + lease.
func (o Options) margin(interval time.Duration) time.Duration {
	m := time.Duration(o.DriftRate * float64(interval))
	if m < o.MarginFloor {
		return o.MarginFloor
	}
	return m
}

// wireWait is PROTOCOL.md 9.5: the time left to D in whole seconds, rounded up, at most 255;
// ok is false when D has passed (the request must not be sent).
func wireWait(deadline, now time.Time) (wait uint8, ok bool) {
	left := deadline.Sub(now)
	if left <= 0 {
		return 0, false
	}
	secs := (left + time.Second - 1) / time.Second
	if secs > 255 {
		secs = 255
	}
	return uint8(secs), true
}

// wireWaitMs is 9.13's wire wait of an M: the time left to D in milliseconds, rounded up, at
// least 1; ok is false when D has passed (the request must not be sent).
func wireWaitMs(deadline, now time.Time) (waitMs uint32, ok bool) {
	left := deadline.Sub(now)
	if left <= 0 {
		return 0, false
	}
	ms := (left + time.Millisecond - 1) / time.Millisecond
	if ms > 1<<32-1 {
		ms = 1<<32 - 1
	}
	return uint32(ms), true
}

// wholeSeconds converts a lease or wait to the wire's u8 seconds.
func wholeSeconds(d time.Duration, min int, what string) (uint8, error) {
	if d%time.Second != 0 || d < time.Duration(min)*time.Second || d > 255*time.Second {
		return 0, fmt.Errorf("%w: %s %v must be whole seconds from %ds to 255s", ErrInvalidArgument, what, d, min)
	}
	return uint8(d / time.Second), nil
}
