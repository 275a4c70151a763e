package dev.leasehold.client;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.protocol.Keys;
import dev.leasehold.protocol.Wire;

/** Argument checks made before anything is sent; each failure says what is wrong. */
final class Arguments {

    /** The longest wait a caller may ask for (PROTOCOL.md 9.13: the largest {@code max-wait}). */
    static final java.time.Duration MAX_WAIT = java.time.Duration.ofMillis(Wire.MAX_WAIT_MILLIS_CEILING);

    /** The longest value any 1.4 server may take (PROTOCOL.md 17.5: {@code max-value-bytes} is at most 1024). */
    static final int MAX_VALUE_BYTES = 1024;

    private Arguments() {
    }

    /** The key's exact UTF-8 bytes, or an IllegalArgumentException. */
    static byte[] key(String key) {
        return Keys.utf8(key, Wire.DEFAULT_MAX_KEY_BYTES);
    }

    static int waitSeconds(int wait) {
        if (wait < 0 || wait > Wire.MAX_SECONDS) {
            throw new IllegalArgumentException("wait is " + wait + " s; it must be 0 to " + Wire.MAX_SECONDS
                    + " seconds (0 = one immediate attempt)");
        }
        return wait;
    }

    /**
     * A caller's wait in milliseconds (PROTOCOL.md 9.13): 0 to 3600 s, finer parts rounded up, a
     * positive wait below 1 ms made 1 ms.
     */
    static long waitMillis(java.time.Duration wait) {
        if (wait == null || wait.isNegative() || wait.compareTo(MAX_WAIT) > 0) {
            throw new IllegalArgumentException("wait is " + wait + "; it must be 0 to " + MAX_WAIT.toSeconds()
                    + " seconds (0 = one immediate attempt)");
        }
        return dev.leasehold.client.internal.LeaseMath.waitMillis(wait.toNanos());
    }

    static int leaseSeconds(int lease) {
        if (lease < 1 || lease > Wire.MAX_SECONDS) {
            throw new IllegalArgumentException("lease is " + lease + " s; it must be 1 to " + Wire.MAX_SECONDS
                    + " seconds");
        }
        return lease;
    }

    /** A value of an exclusive grant or a proclaim (PROTOCOL.md 9.16): 0 to 1024 bytes, copied. */
    static byte[] value(byte[] value) {
        if (value == null || value.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("a value is 0 to " + MAX_VALUE_BYTES
                    + " bytes, not " + (value == null ? "null" : value.length + " bytes"));
        }
        return value.clone();
    }

    static <T> T notNull(T value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " is null");
        }
        return value;
    }

    /** A key with a wait and a lease, checked: the key's bytes. */
    static byte[] checked(String key, int waitSeconds, int leaseSeconds) {
        byte[] bytes = key(key);
        waitSeconds(waitSeconds);
        leaseSeconds(leaseSeconds);
        return bytes;
    }

    static long positive(java.time.Duration retryFor) {
        if (retryFor == null || retryFor.isNegative() || retryFor.isZero()) {
            throw new IllegalArgumentException("retryFor must be positive, not " + retryFor);
        }
        return retryFor.toNanos();
    }

    /** A shared acquire's mode from its limit: 0 (read lock) to 65535 (the wire's u16); the server may allow fewer. */
    static HoldMode sharedMode(int limit) {
        if (limit < 0 || limit > HoldMode.MAX_LIMIT) {
            throw new IllegalArgumentException("shared limit is " + limit + "; it must be 0 (read lock) to 65535");
        }
        return HoldMode.ofLimit(limit);
    }
}
