package dev.leasehold.protocol;

/**
 * A decoded server answer. Acquire answers correlate by {@code owner}, Release and Extend
 * answers by {@code token}, Pongs by {@code nonce}.
 */
public sealed interface Answer permits Answer.Acquired, Answer.TimedOut, Answer.Busy, Answer.Released,
        Answer.Extended, Answer.NotHeld, Answer.Current, Answer.Pong, Answer.Error, Answer.LimitMismatch, Answer.Hello,
        Answer.ValueSet, Answer.Event, Answer.Unobserved {

    AnswerType type();

    /** The lock was granted; {@code queuedMs} is receipt-to-grant time, rounded down. */
    record Acquired(long owner, long token, long queuedMs) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.ACQUIRED;
        }
    }

    /** The Acquire's wait ran out (or wait was 0 and the key was taken). Definitive. */
    record TimedOut(long owner) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.TIMED_OUT;
        }
    }

    /**
     * A shared acquire was neither granted nor queued: the key's shared holds use {@code limit}
     * (PROTOCOL.md section 13.2). Definitive; the session stays open.
     */
    record LimitMismatch(long owner, int limit) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.LIMIT_MISMATCH;
        }
    }

    /** The server did not and will not grant this Acquire (a limit, or draining). Definitive. */
    record Busy(long owner) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.BUSY;
        }
    }

    record Released(long token) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.RELEASED;
        }
    }

    record Extended(long token) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.EXTENDED;
        }
    }

    /**
     * The token is not the active grant of the key (released, expired, or never issued): Release,
     * Extend, Check; for a set value ({@code V}), not its active exclusive grant.
     */
    record NotHeld(long token) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.NOT_HELD;
        }
    }

    /** The token of a Check is the key's active grant, as the serving leader sees it now. */
    record Current(long token) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.CURRENT;
        }
    }

    /**
     * The token of a {@code V} is the key's active exclusive grant, and its value is now the one
     * sent (PROTOCOL.md 17.1).
     */
    record ValueSet(long token) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.VALUE_SET;
        }
    }

    record Pong(long nonce) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.PONG;
        }
    }

    /**
     * The server's revision and limits (PROTOCOL.md 14.1): the longest {@code wait_ms} an
     * {@code M} may carry and the longest value (0: values off).
     */
    record Hello(int revision, long maxWaitMillis, int maxValueBytes) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.HELLO;
        }
    }

    /**
     * An event of watch {@code watch} (PROTOCOL.md 16.2): the key's {@code state} (one of the
     * {@code STATE_} bytes), what decided it ({@code cause}, one of the {@code CAUSE_} values),
     * {@code flags} (bit 0: {@link #COALESCED}), the token, the shared slots in use ({@code count},
     * 1 for {@code H}), the key's shared limit and, for {@code H}, the grant's value (empty for none).
     */
    record Event(long watch, int state, int cause, int flags, long token, int count, int limit, byte[] value)
            implements Answer {
        /** Free. */
        public static final int STATE_FREE = 'F';
        /** Held by one exclusive grant. */
        public static final int STATE_HELD = 'H';
        /** In lock-delay after an exclusive grant's expiry (section 12). */
        public static final int STATE_DELAYED = 'D';
        /** Held shared: one or more shared slots, delayed ones included (section 13). */
        public static final int STATE_SHARED = 'S';
        /** Recovery grace after a restart (section 8): who may hold it is unknown. */
        public static final int STATE_GRACE = 'G';
        /** A first event: the key's state when the watch began. */
        public static final int CAUSE_CURRENT = 0;
        /** A grant, whatever freed the key before it. */
        public static final int CAUSE_GRANT = 1;
        /** A Release, nothing granted. */
        public static final int CAUSE_RELEASE = 2;
        /** A lease expiry, nothing granted. */
        public static final int CAUSE_EXPIRY = 3;
        /** The end of a lock-delay, nothing granted. */
        public static final int CAUSE_DELAY_END = 4;
        /** A {@code V} changed the holder's value (section 17). */
        public static final int CAUSE_VALUE = 5;
        /** The end of the recovery grace, nothing granted. */
        public static final int CAUSE_GRACE_END = 6;
        /** Flags bit 0: at least one change since the watch's previous event is not reported (16.4). */
        public static final int COALESCED = 1;

        @Override
        public AnswerType type() {
            return AnswerType.EVENT;
        }

        /** True if flags bit 0 is set: changes were folded into this event. */
        public boolean coalesced() {
            return (flags & COALESCED) != 0;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Event e && e.watch == watch && e.state == state && e.cause == cause && e.flags == flags
                    && e.token == token && e.count == count && e.limit == limit && java.util.Arrays.equals(e.value, value);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(watch) * 31 + Long.hashCode(token) * 7 + state;
        }

        @Override
        public String toString() {
            return "Event[watch=" + watch + ", state=" + (char) state + ", cause=" + cause + ", flags=" + flags
                    + ", token=" + token + ", count=" + count + ", limit=" + limit + ", vlen=" + value.length + "]";
        }
    }

    /** Watch {@code watch} is closed: its last frame (PROTOCOL.md 16.1). */
    record Unobserved(long watch) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.UNOBSERVED;
        }
    }

    /** Malformed input; the server closes the session after sending it. */
    record Error(int code, String message) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.ERROR;
        }
    }
}
