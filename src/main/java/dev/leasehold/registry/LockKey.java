package dev.leasehold.registry;

import java.util.Arrays;

/**
 * A lock key: the exact bytes received, compared byte for byte (no Unicode normalisation).
 * The array is owned by this object and never modified.
 */
public final class LockKey {

    private final byte[] bytes;
    private final int hash;

    public LockKey(byte[] bytes) {
        this.bytes = bytes;
        this.hash = mix(Arrays.hashCode(bytes));
    }

    public byte[] bytes() {
        return bytes;
    }

    public int length() {
        return bytes.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockKey k && k.hash == hash && Arrays.equals(k.bytes, bytes);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return dev.leasehold.protocol.Keys.printable(bytes);
    }

    /** Spreads bits so that similar keys ("job-1", "job-2") fall into different lanes. */
    private static int mix(int h) {
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        return h;
    }
}
