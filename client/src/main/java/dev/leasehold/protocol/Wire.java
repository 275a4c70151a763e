package dev.leasehold.protocol;

/** Constants and limits of protocol v1, in one place. */
public final class Wire {

    /** Every frame ends with this byte; the binary header before it may contain it too. */
    public static final byte TERMINATOR = 0x0A;

    /** Default TCP port of the protocol. */
    public static final int DEFAULT_PORT = 7420;

    /** Default (and the client's) largest key, in UTF-8 bytes. */
    public static final int DEFAULT_MAX_KEY_BYTES = 512;

    /** Largest wait and lease in seconds: they travel as one unsigned byte. */
    public static final int MAX_SECONDS = 255;

    /** Largest message of an {@code X} frame, in UTF-8 bytes. */
    public static final int MAX_ERROR_MESSAGE_BYTES = 200;

    /** Revision 1.4 as {@code H} carries it: the major in the high byte, the minor in the low one. */
    public static final int REVISION_1_4 = 0x0104;

    /** The longest {@code wait_ms} any server may allow ({@code leasehold.max-wait} at most 3600 s). */
    public static final long MAX_WAIT_MILLIS_CEILING = 3_600_000L;

    /** The smallest {@code leasehold.max-wait}: every {@code A} and {@code S} wait fits (255 s). */
    public static final long MIN_MAX_WAIT_MILLIS = MAX_SECONDS * 1000L;

    private Wire() {
    }
}
