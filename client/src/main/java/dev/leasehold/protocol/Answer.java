package dev.leasehold.protocol;

/**
 * A decoded server answer. Acquire answers correlate by {@code owner}, Release and Extend
 * answers by {@code token}, Pongs by {@code nonce}.
 */
public sealed interface Answer permits Answer.Acquired, Answer.TimedOut, Answer.Busy, Answer.Released,
        Answer.Extended, Answer.NotHeld, Answer.Current, Answer.Pong, Answer.Error, Answer.LimitMismatch, Answer.Hello,
        Answer.ValueSet {

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

    /** Malformed input; the server closes the session after sending it. */
    record Error(int code, String message) implements Answer {
        @Override
        public AnswerType type() {
            return AnswerType.ERROR;
        }
    }
}
