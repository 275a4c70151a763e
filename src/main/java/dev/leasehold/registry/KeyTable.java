package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A lane's keys: an open-addressing hash table (linear probing, backward-shift deletion) of
 * {@link KeyState}s, looked up by the key's bytes.
 *
 * <p>Why not {@code HashMap<LockKey, KeyState>}: every held lock then costs a {@code LockKey}
 * (24 B) and a {@code HashMap.Node} (32 B) on top of its {@code KeyState} and key bytes, and every
 * request allocates a {@code LockKey} just to look up. Here an entry is one reference in an array
 * (about 5 to 11 B per key at the load factors used), the state itself carries its key bytes and
 * hash, and a lookup allocates nothing. Measured with bench/ W3 (200 k held keys): live heap per
 * held lock went from 195 B to about 130 B.
 *
 * <p>Not thread-safe: each {@link Lane} owns one and touches it only under the lane lock. The
 * table grows (doubling) above 3/4 full and never shrinks, like {@code HashMap}; its size is
 * bounded by {@code max-held-keys} plus the queued keys.
 */
final class KeyTable {

    private static final int MIN_CAPACITY = 16;

    private KeyState[] slots = new KeyState[MIN_CAPACITY];
    /** 32 - log2(capacity): index = high bits of the (re-mixed) hash. */
    private int shift = 32 - Integer.numberOfTrailingZeros(MIN_CAPACITY);
    private int size;

    /** The key's hash, as stored in {@link KeyState#hash}: well spread, since lanes use its low bits. */
    static int hash(byte[] key) {
        int h = Arrays.hashCode(key);
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        return h;
    }

    /**
     * Lanes are chosen by the low bits of {@link #hash}; the slot uses the high bits of a second
     * multiplicative mix (Fibonacci hashing), so keys of one lane still spread over its table.
     */
    private int index(int hash) {
        return (hash * 0x9E3779B9) >>> shift;
    }

    /** The state of {@code key} ({@code hash} = {@link #hash}(key)), or null. */
    KeyState get(byte[] key, int hash) {
        KeyState[] t = slots;
        int mask = t.length - 1;
        for (int i = index(hash);; i = (i + 1) & mask) {
            KeyState s = t[i];
            if (s == null) {
                return null;
            }
            if (s.hash == hash && Arrays.equals(s.key, key)) {
                return s;
            }
        }
    }

    /** True if this very state object is in the table. */
    boolean contains(KeyState s) {
        return get(s.key, s.hash) == s;
    }

    /** Adds {@code s} unless a state for its key is already present (then does nothing). */
    void putIfAbsent(KeyState s) {
        if (get(s.key, s.hash) != null) {
            return;
        }
        if (size + 1 > slots.length - (slots.length >>> 2)) {
            resize(slots.length * 2);
        }
        insert(slots, s);
        size++;
    }

    /** Removes this very state object, if present. */
    void remove(KeyState s) {
        KeyState[] t = slots;
        int mask = t.length - 1;
        int i = index(s.hash);
        while (true) {
            KeyState e = t[i];
            if (e == null) {
                return;
            }
            if (e == s) {
                break;
            }
            i = (i + 1) & mask;
        }
        // Backward-shift deletion: move later entries of the probe run into the hole when their
        // home slot is not between the hole and their position, so no tombstones are needed.
        int hole = i;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            KeyState e = t[j];
            if (e == null) {
                break;
            }
            int home = index(e.hash);
            boolean stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
            if (!stays) {
                t[hole] = e;
                hole = j;
            }
        }
        t[hole] = null;
        size--;
    }

    int size() {
        return size;
    }

    /**
     * Visits the entries in slots {@code from} to {@code from + count - 1} (a walk in chunks
     * under the lane lock, letting it go between chunks) without changing the table. Every 64
     * slots it asks {@code yield} and stops early if it says so (a request waits for the lock).
     *
     * @return the slot to continue from, or -1 when the table's end was reached
     */
    int scan(int from, int count, java.util.function.Consumer<KeyState> visit,
            java.util.function.BooleanSupplier yield) {
        KeyState[] t = slots;
        int end = (int) Math.min(t.length, (long) from + count);
        for (int i = from; i < end; i++) {
            if (t[i] != null) {
                visit.accept(t[i]);
            }
            if ((i & 63) == 63 && i + 1 < end && yield.getAsBoolean()) {
                return i + 1;
            }
        }
        return end >= t.length ? -1 : end;
    }

    /** A copy of the entries, for walks that may change the table. */
    List<KeyState> snapshot() {
        List<KeyState> all = new ArrayList<>(size);
        for (KeyState s : slots) {
            if (s != null) {
                all.add(s);
            }
        }
        return all;
    }

    private void insert(KeyState[] t, KeyState s) {
        int mask = t.length - 1;
        int i = index(s.hash);
        while (t[i] != null) {
            i = (i + 1) & mask;
        }
        t[i] = s;
    }

    private void resize(int capacity) {
        KeyState[] old = slots;
        slots = new KeyState[capacity];
        shift = 32 - Integer.numberOfTrailingZeros(capacity);
        for (KeyState s : old) {
            if (s != null) {
                insert(slots, s);
            }
        }
    }
}
