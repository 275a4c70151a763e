package dev.leasehold.protocol;

import java.nio.ByteBuffer;

/**
 * Writes server answers for JDK-only test doubles (fake servers, proxies, stubs): the twin of
 * {@link RequestReader}, and the mirror of the server's own encoder ({@code server.Answers}), which
 * {@code AnswersTests} holds to the same golden bytes. A test fixture, not part of the client jar:
 * the client writes requests ({@link FrameWriter}) and reads answers ({@link AnswerDecoder}), the
 * server the other way round, and only the test doubles need the reverse of both. The server's
 * tests get it through the client's test jar.
 */
public final class AnswerWriter {

    private AnswerWriter() {
    }

    /**
     * The frame of {@code answer}. The switch over {@link AnswerType} has no default: a new answer
     * type does not compile until its body layout is written here.
     */
    public static byte[] encode(Answer answer) {
        byte[] message = answer instanceof Answer.Error e ? FrameWriter.errorMessageBytes(e.message()) : null;
        int len = message != null ? 2 + message.length + 1
                : answer instanceof Answer.Event e ? AnswerType.EVENT_HEADER_BYTES + e.value().length + 1
                : answer.type().frameBytes();
        ByteBuffer out = ByteBuffer.allocate(len);
        out.put(answer.type().op());
        ByteBuffer body = switch (answer.type()) {
            case ACQUIRED -> acquiredBody((Answer.Acquired) answer, out);
            case TIMED_OUT -> out.putLong(((Answer.TimedOut) answer).owner());
            case BUSY -> out.putLong(((Answer.Busy) answer).owner());
            case RELEASED -> out.putLong(((Answer.Released) answer).token());
            case EXTENDED -> out.putLong(((Answer.Extended) answer).token());
            case NOT_HELD -> out.putLong(((Answer.NotHeld) answer).token());
            case CURRENT -> out.putLong(((Answer.Current) answer).token());
            case PONG -> out.putLong(((Answer.Pong) answer).nonce());
            case VALUE_SET -> out.putLong(((Answer.ValueSet) answer).token());
            case ERROR -> out.put((byte) ((Answer.Error) answer).code()).put(message);
            case LIMIT_MISMATCH -> out.putLong(((Answer.LimitMismatch) answer).owner())
                    .putShort((short) ((Answer.LimitMismatch) answer).limit());
            case HELLO -> out.putShort((short) ((Answer.Hello) answer).revision())
                    .putInt((int) ((Answer.Hello) answer).maxWaitMillis())
                    .putShort((short) ((Answer.Hello) answer).maxValueBytes());
            case EVENT -> eventBody((Answer.Event) answer, out);
            case UNOBSERVED -> out.putLong(((Answer.Unobserved) answer).watch());
        };
        body.put(Wire.TERMINATOR);
        return out.array();
    }

    private static ByteBuffer eventBody(Answer.Event e, ByteBuffer out) {
        return out.putLong(e.watch()).put((byte) e.state()).put((byte) e.cause()).put((byte) e.flags())
                .putLong(e.token()).putShort((short) e.count()).putShort((short) e.limit())
                .putShort((short) e.value().length).put(e.value());
    }

    private static ByteBuffer acquiredBody(Answer.Acquired a, ByteBuffer out) {
        return out.putLong(a.owner()).putLong(a.token()).putInt((int) a.queuedMs());
    }
}
