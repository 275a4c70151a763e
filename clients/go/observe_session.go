package leasehold

import (
	"errors"
	"time"
)

// A session's part of observing (PROTOCOL.md section 16): the watches written on it, their
// events and refusals, and what its end means for them.

// watchEntry is a subscription (O) written on a session.
type watchEntry struct {
	r        *request
	answered bool // its first event or B came (it no longer counts as in flight)
}

func (s *session) isWatch(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.watches[id]
	return ok
}

// watchAnswered hands an event or a B to the watch's observation; a U answer needs nothing.
func (s *session) watchAnswered(a answer) {
	if a.op == opUnobserve {
		return
	}
	s.mu.Lock()
	w := s.watches[a.id]
	if w != nil && !w.answered {
		w.answered = true
		s.inflight--
	}
	if w != nil && a.op == opBusy { // B subscribes nothing (16.6)
		delete(s.watches, a.id)
	}
	s.mu.Unlock()
	if w == nil {
		return // a watch this client unobserved: its U is on the way
	}
	if a.op == opBusy {
		w.r.obs.ended(w.r, endBusy, errors.New("the server answered B: a watch limit was reached"))
		return
	}
	w.r.obs.event(w.r, a)
}

// unwatch forgets r's watch on s and sends its U (16.1), if s is still open.
func (s *session) unwatch(r *request) {
	s.mu.Lock()
	if w := s.watches[r.owner]; w != nil {
		delete(s.watches, r.owner)
		if !w.answered {
			s.inflight--
		}
	}
	dead := s.dead
	s.mu.Unlock()
	if !dead {
		u := newRequest(opUnobserve, r.key, time.Time{}) // no deadline: encode sends it as it comes
		u.owner = r.owner
		s.enqueue(u)
	}
}

// refuseLocked ends r unsent: the session cannot carry it (why, 9.13). r.mu is held.
func (s *session) refuseLocked(r *request, why string) {
	switch r.op {
	case opObserve:
		r.concludeLocked(result{})
		r.obs.ended(r, endLegacy, errors.New(why))
	case opValue:
		r.concludeLocked(result{err: newError(ErrUnavailable, "proclaim", r.key, why, nil)})
	default:
		r.concludeLocked(result{err: newError(ErrUnavailable, r.name(), r.key, why, nil)})
	}
}

// subscriptionFailed tells the observation of r, an O still queued on a session that ended.
func (s *session) subscriptionFailed(r *request, cause error, notExecuted bool) {
	r.conclude(result{})
	kind := endBroken
	if notExecuted {
		kind = endRedirect
	}
	r.obs.ended(r, kind, cause)
}

// watchesEnded tells the observations of the watches of a session that ended: X 8 (nothing
// executed: to the leader), an X 7 naming the key (forbidden), else broken (9.15.3).
func (s *session) watchesEnded(watches map[uint64]*watchEntry, cause error, notExecuted bool, refused string) {
	for _, w := range watches {
		kind := endBroken
		switch {
		case notExecuted:
			kind = endRedirect
		case refused != "" && forbids(refused, w.r.key):
			kind = endForbidden
		}
		w.r.obs.ended(w.r, kind, cause)
	}
}
