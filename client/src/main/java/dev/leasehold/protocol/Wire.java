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

    private Wire() {
    }
}
