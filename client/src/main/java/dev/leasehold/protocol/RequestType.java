package dev.leasehold.protocol;

/**
 * The request opcodes a client may send. Each owns its wire byte and the length of the fixed
 * binary header that follows it (op byte included), which a reader must consume by count
 * before it looks for the terminator, because the header may contain 0x0A.
 */
public enum RequestType {
    /** {@code A wait:u8 lease:u8 owner:u64 key \n}. */
    ACQUIRE('A', 11, true),
    /** {@code R token:u64 key \n}. */
    RELEASE('R', 9, true),
    /** {@code E lease:u8 token:u64 key \n}. */
    EXTEND('E', 10, true),
    /** {@code C token:u64 key \n}: is {@code token} the key's active grant? Changes nothing. */
    CHECK('C', 9, true),
    /** {@code P nonce:u64 \n}. */
    PING('P', 9, false),
    /**
     * {@code S wait:u8 lease:u8 owner:u64 limit:u16 key \n}: a shared acquire (PROTOCOL.md
     * section 13), a read lock (limit 0) or a semaphore permit (limit N).
     */
    SHARED_ACQUIRE('S', 13, true),
    /**
     * {@code H rev:u16 \n}: which revision and limits the server speaks (PROTOCOL.md 14.1). No key;
     * changes nothing.
     */
    HELLO('H', 3, false),
    /**
     * {@code M flags:u8 wait_ms:u32 lease:u8 owner:u64 limit:u16 vlen:u16 value key \n}: an
     * acquire, exclusive or shared, whose wait is in milliseconds (PROTOCOL.md 14.2). The
     * {@code vlen} bytes of value follow the 19-byte header and are read by count, then the key.
     */
    MILLI_ACQUIRE('M', 19, true),
    /**
     * {@code W owner:u64 key \n}: withdraw this session's queued acquires of {@code owner} on the
     * key (PROTOCOL.md section 15). No answer of its own.
     */
    WITHDRAW('W', 9, true),
    /**
     * {@code V token:u64 vlen:u16 value key \n}: set the value of the key's active exclusive grant
     * {@code token} (PROTOCOL.md section 17); {@code vlen} 0 clears it. The {@code vlen} bytes of
     * value follow the 11-byte header and are read by count, then the key.
     */
    SET_VALUE('V', 11, true),
    /**

     * {@code O watch:u64 key \n}: observe the key as watch {@code watch}, chosen by the client
     * (PROTOCOL.md section 16). Answered with the watch's first event or {@code B watch}.
     */
    OBSERVE('O', 9, true),
    /** {@code U watch:u64 \n}: end watch {@code watch}; answered {@code U watch} (PROTOCOL.md 16.1). */
    UNOBSERVE('U', 9, false);

    private static final RequestType[] BY_BYTE = new RequestType[256];

    static {
        for (RequestType t : values()) {
            BY_BYTE[t.op] = t;
        }
    }

    private final byte op;
    private final int headerBytes;
    private final boolean hasKey;

    RequestType(char op, int headerBytes, boolean hasKey) {
        this.op = (byte) op;
        this.headerBytes = headerBytes;
        this.hasKey = hasKey;
    }

    /** The type for a wire byte, or {@code null} for an unknown op (protocol error 1). */
    public static RequestType fromByte(int b) {
        return BY_BYTE[b & 0xFF];
    }

    public byte op() {
        return op;
    }

    /** Header length including the op byte; the key (if any) and terminator follow. */
    public int headerBytes() {
        return headerBytes;
    }

    public boolean hasKey() {
        return hasKey;
    }
}
