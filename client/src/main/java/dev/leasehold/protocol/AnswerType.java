package dev.leasehold.protocol;

/**
 * The answer opcodes a server sends, with the fixed length of each (op byte and terminator
 * included). {@link #ERROR} and {@link #EVENT} are the variable-length answers.
 */
public enum AnswerType {
    /** {@code A owner:u64 token:u64 queued_ms:u32 \n}. */
    ACQUIRED('A', 22),
    /** {@code T owner:u64 \n}. */
    TIMED_OUT('T', 10),
    /** {@code B owner:u64 \n}. */
    BUSY('B', 10),
    /** {@code R token:u64 \n}. */
    RELEASED('R', 10),
    /** {@code E token:u64 \n}. */
    EXTENDED('E', 10),
    /** {@code C token:u64 \n}: the token of a Check is the key's active grant. */
    CURRENT('C', 10),
    /** {@code N token:u64 \n}: Release, Extend, Check or (1.4) set value of a token that is not the active grant. */
    NOT_HELD('N', 10),
    /** {@code P nonce:u64 \n}. */
    PONG('P', 10),
    /** {@code X code:u8 message \n}; the server closes the session after it. */
    ERROR('X', -1),
    /** {@code L owner:u64 limit:u16 \n}: a shared acquire's limit is not the key's (PROTOCOL.md 13.2). */
    LIMIT_MISMATCH('L', 12),
    /**
     * {@code H rev:u16 max_wait_ms:u32 max_value_bytes:u16 \n}: the server's revision and limits,
     * answering a Hello (PROTOCOL.md 14.1).
     */
    HELLO('H', 10),
    /**
     * {@code V token:u64 \n}: a {@code V}'s token is the key's active exclusive grant; its value is
     * set (PROTOCOL.md 17.1).
     */
    VALUE_SET('V', 10),
    /**
     * {@code O watch:u64 state:u8 cause:u8 flags:u8 token:u64 count:u16 limit:u16 vlen:u16 value \n}:
     * an event of a watch (PROTOCOL.md 16.1), {@link #EVENT_HEADER_BYTES} then {@code vlen} bytes
     * then 0x0A; variable length.
     */
    EVENT('O', -1),
    /** {@code U watch:u64 \n}: the watch is closed; its last frame (PROTOCOL.md 16.1). */
    UNOBSERVED('U', 10);

    /** The fixed part of an {@link #EVENT}, op byte included: 26 bytes, then the value and 0x0A. */
    public static final int EVENT_HEADER_BYTES = 26;

    private static final AnswerType[] BY_BYTE = new AnswerType[256];

    static {
        for (AnswerType t : values()) {
            BY_BYTE[t.op] = t;
        }
    }

    private final byte op;
    private final int frameBytes;

    AnswerType(char op, int frameBytes) {
        this.op = (byte) op;
        this.frameBytes = frameBytes;
    }

    /** The type for a wire byte, or {@code null} if no answer uses it. */
    public static AnswerType fromByte(int b) {
        return BY_BYTE[b & 0xFF];
    }

    public byte op() {
        return op;
    }

    /** Whole frame length for fixed-size answers; -1 for {@link #ERROR} and {@link #EVENT}. */
    public int frameBytes() {
        return frameBytes;
    }
}
