package leasehold

import (
	"bufio"
	"bytes"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
	"time"
)

// The hex examples of PROTOCOL.md 14.7 (an M with a value), 16.9 (observe) and 17.7 (values).

func TestValueAndObserveRequestsEncodeAsTheProtocolExamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"a campaign's M with the value n1", appendMilli(nil, false, 255000, 15, 0x0A0A0A0A0A0A0A0A, 0, []byte("n1"), "lead"),
			"4D 00 00 03 E4 18 0F 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 02 6E 31 6C 65 61 64 0A"},
		{"V n2", appendValue(nil, 1042, []byte("n2"), "lead"), "56 00 00 00 00 00 00 04 12 00 02 6E 32 6C 65 61 64 0A"},
		{"V clear", appendValue(nil, 1042, nil, "lead"), "56 00 00 00 00 00 00 04 12 00 00 6C 65 61 64 0A"},
		{"V holding 0x0A", appendValue(nil, 1042, []byte("a\nb"), "lead"), "56 00 00 00 00 00 00 04 12 00 03 61 0A 62 6C 65 61 64 0A"},
		{"observe watch 5", appendObserve(nil, 5, "lead"), "4F 00 00 00 00 00 00 00 05 6C 65 61 64 0A"},
		{"observe watch 10", appendObserve(nil, 10, "lead"), "4F 00 00 00 00 00 00 00 0A 6C 65 61 64 0A"},
		{"unobserve watch 5", appendUnobserve(nil, 5), "55 00 00 00 00 00 00 00 05 0A"},
	} {
		if want := unhex(t, tc.want); !bytes.Equal(tc.got, want) {
			t.Errorf("%s: got % X, want % X", tc.name, tc.got, want)
		}
	}
}

func TestEventsAndValueAnswersDecodeAsTheProtocolExamples(t *testing.T) {
	stream := unhex(t, "4F 00 00 00 00 00 00 00 05 46 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 0A"+ // free, no token
		"4F 00 00 00 00 00 00 00 05 48 01 00 00 00 00 00 00 00 04 12 00 01 00 00 00 02 6E 31 0A"+ // granted 1042, n1
		"4F 00 00 00 00 00 00 00 05 48 05 00 00 00 00 00 00 00 04 12 00 01 00 00 00 02 6E 32 0A"+ // value n2
		"4F 00 00 00 00 00 00 00 05 46 02 00 00 00 00 00 00 00 04 12 00 00 00 00 00 00 0A"+ // released
		"4F 00 00 00 00 00 00 00 05 48 01 01 00 00 00 00 00 00 04 14 00 01 00 00 00 00 0A"+ // coalesced
		"4F 00 00 00 00 00 00 00 05 44 03 00 00 00 00 00 00 00 04 14 00 00 00 00 00 00 0A"+ // lock-delay
		"4F 00 00 00 00 00 00 00 06 53 01 00 00 00 00 00 00 00 00 07 00 03 00 04 00 00 0A"+ // semaphore 3 of 4
		"55 00 00 00 00 00 00 00 05 0A"+ // unobserved
		"42 00 00 00 00 00 00 00 05 0A"+ // an O refused
		"56 00 00 00 00 00 00 04 12 0A"+ // value set
		"4E 00 00 00 00 00 00 04 12 0A"+ // not the active grant
		"4F 00 00 00 00 00 00 00 07 48 05 00 00 00 00 00 00 00 00 09 00 01 00 00 00 03 61 0A 62 0A") // a value holding 0x0A
	want := []answer{
		{op: opObserve, id: 5, state: 'F'},
		{op: opObserve, id: 5, state: 'H', cause: 1, token: 1042, count: 1, value: []byte("n1")},
		{op: opObserve, id: 5, state: 'H', cause: 5, token: 1042, count: 1, value: []byte("n2")},
		{op: opObserve, id: 5, state: 'F', cause: 2, token: 1042},
		{op: opObserve, id: 5, state: 'H', cause: 1, flags: 1, token: 1044, count: 1},
		{op: opObserve, id: 5, state: 'D', cause: 3, token: 1044},
		{op: opObserve, id: 6, state: 'S', cause: 1, token: 7, count: 3, limit: 4},
		{op: opUnobserve, id: 5},
		{op: opBusy, id: 5},
		{op: opValue, id: 1042},
		{op: opNotHeld, id: 1042},
		{op: opObserve, id: 7, state: 'H', cause: 5, token: 9, count: 1, value: []byte("a\nb")},
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
	if _, err := readAnswer(bufio.NewReader(bytes.NewReader(unhex(t, "4F 00 00 00 00 00 00 00 05 46 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 58")))); err == nil {
		t.Fatal("an event not terminated by 0x0A must be a protocol error")
	}
}

// 9.13 and 9.16.1: what a session rules out is never sent.
func TestASessionRefusesWhatItCannotCarry(t *testing.T) {
	acq := newRequest(opAcquire, "k", time.Time{})
	acq.value = []byte("n1")
	if why := acq.cannotCarry(false, 0); why == "" {
		t.Fatal("a value on a 1.3 session must be refused")
	}
	if why := acq.cannotCarry(true, 1); why == "" {
		t.Fatal("a value over max_value_bytes must be refused")
	}
	if why := acq.cannotCarry(true, 2); why != "" {
		t.Fatalf("a value within max_value_bytes: %s", why)
	}
	plain := newRequest(opAcquire, "k", time.Time{})
	if why := plain.cannotCarry(false, 0); why != "" {
		t.Fatalf("a plain acquire on a 1.3 session is an A: %s", why)
	}
	for _, op := range []byte{opValue, opObserve} {
		if why := newRequest(op, "k", time.Time{}).cannotCarry(false, 0); why == "" {
			t.Fatalf("%c on a 1.3 session must be refused", op)
		}
	}
}
