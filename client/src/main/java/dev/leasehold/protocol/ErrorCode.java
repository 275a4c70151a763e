package dev.leasehold.protocol;

/** Codes of the {@code X} frame (PROTOCOL.md section 4). */
public enum ErrorCode {
    UNKNOWN_OP(1),
    BAD_KEY(2),
    BAD_ARGUMENT(3),
    FRAME_TOO_LONG(4),
    INCOMPLETE_FRAME(5),
    MISSING_TERMINATOR(6),
    /** The client may not use the key (ACLs); message {@code forbidden key "<key>"} ({@link #forbiddenMessage}). */
    FORBIDDEN(7),
    /** Cluster follower: nothing of this session was executed; message {@code leader=host:port} or empty. */
    NOT_LEADER(8),
    /** This cluster node stopped serving locks while the session was open; message as for 8. */
    LEADERSHIP_LOST(9);

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /**
     * The message of {@code X 7}: {@code forbidden key "<key>"}, the key as {@link Keys#printable}
     * shows it, so that a client can tell which of its requests was refused (PROTOCOL.md section 4).
     */
    public static String forbiddenMessage(byte[] key) {
        return "forbidden key " + Keys.printable(key);
    }

    /**
     * True when an {@code X 7} message names exactly {@code key}: the message is
     * {@link #forbiddenMessage} of that key and the key was not cut for printing (a cut one could
     * name another key too) nor the message for the 200-byte limit.
     */
    public static boolean forbids(String message, byte[] key) {
        String printable = Keys.printable(key);
        return !printable.endsWith("...\"") && message.equals(forbiddenMessage(key))
                && FrameWriter.errorMessageBytes(message).length == message.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }

    /** The code for a wire value, or {@code null} for one this version does not define. */
    public static ErrorCode fromCode(int code) {
        for (ErrorCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return null;
    }
}
