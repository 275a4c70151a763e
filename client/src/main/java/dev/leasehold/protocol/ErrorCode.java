package dev.leasehold.protocol;

/** Codes of the {@code X} frame (PROTOCOL.md section 4). */
public enum ErrorCode {
    UNKNOWN_OP(1),
    BAD_KEY(2),
    BAD_ARGUMENT(3),
    FRAME_TOO_LONG(4),
    INCOMPLETE_FRAME(5),
    MISSING_TERMINATOR(6),
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
