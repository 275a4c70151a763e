package leasehold

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the client returns matches at most one outcome sentinel with
// errors.Is; use errors.As with *Error for the details and *ServerError for an X answer.
var (
	// ErrTimedOut: the server's wait ran out (T), or wait = 0 and the key was taken.
	// Definitive: no grant exists.
	ErrTimedOut = errors.New("leasehold: timed out")
	// ErrBusy: a server limit was reached or it is draining (B). Definitive: no grant exists.
	ErrBusy = errors.New("leasehold: busy")
	// ErrUnavailable: the request was definitely never sent (no session could take it before
	// its deadline, or the context ended first). Definitive: no grant exists.
	ErrUnavailable = errors.New("leasehold: unavailable")
	// ErrIndeterminate: the request may have reached the server and no definitive answer can
	// be delivered. Do not act as holder; a grant you did not see is released by the client
	// when possible and ends with its lease at the latest.
	ErrIndeterminate = errors.New("leasehold: indeterminate")
	// ErrForbidden: the server's ACL denied the key: an X 7 named exactly this Acquire's key
	// (PROTOCOL.md 9.1). Definitive: no grant exists. The X 7 closes the session; its other
	// unanswered Acquires are ErrIndeterminate (9.9), not ErrForbidden.
	ErrForbidden = errors.New("leasehold: forbidden")
	// ErrNotHeld: the token is not the key's active grant (N): released, expired, or another key.
	ErrNotHeld = errors.New("leasehold: not held")
	// ErrExpired: a Release or Extend gave up because no answer came before the lease would
	// have ended anyway (or before its retry deadline). Treat as not held.
	ErrExpired = errors.New("leasehold: expired")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("leasehold: client closed")
	// ErrInvalidArgument: the call was rejected before anything was sent (bad key, wait or lease).
	ErrInvalidArgument = errors.New("leasehold: invalid argument")
)

// ErrLimitMismatch: a shared Acquire (AcquireShared) was answered L (PROTOCOL.md 13.2): the
// key's shared holds use another limit. Definitive: no grant exists, nothing was queued. A
// configuration error to fix (two deployments disagree on a semaphore's size, or one uses the
// key as a read lock): never retried. The *Error's cause is a *LimitMismatchError.
var ErrLimitMismatch = errors.New("leasehold: limit mismatch")

// LimitMismatchError names both limits of an ErrLimitMismatch: get it with errors.As.
type LimitMismatchError struct {
	Requested int // the limit this call asked for (0 = read lock)
	KeyLimit  int // the limit the key's shared holds use (0 = read lock)
}

func (e *LimitMismatchError) Error() string {
	return fmt.Sprintf("asked for limit %d, but the key's shared holds use limit %d (0 = read lock)", e.Requested, e.KeyLimit)
}

// Error is the error of a call: Kind is one of the sentinels above, Reason says what happened,
// Err (if any) is the cause, for instance a *ServerError, a network error or ctx.Err().
type Error struct {
	Kind   error
	Op     string // "acquire", "acquire shared", "release", "extend", "check", "ping"
	Key    string
	Reason string
	Err    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%v: %s", e.Kind, e.Op)
	if e.Key != "" {
		s += fmt.Sprintf(" %q", e.Key)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is matches the error's Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ServerError is an X answer (PROTOCOL.md section 4): the server closed the session.
type ServerError struct {
	Code    int
	Message string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("server error %d (%s) %q", e.Code, codeName(e.Code), e.Message)
}

func codeName(code int) string {
	switch code {
	case 1:
		return "unknown op"
	case 2:
		return "bad key"
	case 3:
		return "bad argument"
	case 4:
		return "frame too long"
	case 5:
		return "incomplete frame"
	case 6:
		return "missing terminator"
	case 7:
		return "forbidden"
	case 8:
		return "not leader"
	case 9:
		return "leadership lost"
	}
	return "unknown"
}

func newError(kind error, op, key, reason string, cause error) *Error {
	return &Error{Kind: kind, Op: op, Key: key, Reason: reason, Err: cause}
}
