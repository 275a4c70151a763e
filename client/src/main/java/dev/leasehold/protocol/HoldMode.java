package dev.leasehold.protocol;

/**
 * How a grant holds its key (PROTOCOL.md sections 3 and 13): alone ({@link #EXCLUSIVE}, an
 * {@code A}), as one of many readers ({@link #READ}, an {@code S} with limit 0), or as one of
 * {@code n} permits ({@link #permits}, an {@code S} with limit n). Carried from the decoded
 * request through the waiter, the grant, the log entry and the snapshot, so each layer writes
 * the waiting and the holding once and asks the mode only what differs: how many holds the key
 * admits at once, and the limit the wire and the log carry.
 *
 * @param kind which of the three
 * @param permits the semaphore's permits for {@link Kind#PERMITS}; 0 otherwise
 */
public record HoldMode(Kind kind, int permits) {

    /** The three ways to hold a key; every switch over them has no default. */
    public enum Kind {
        /** One holder at a time ({@code A}). */
        EXCLUSIVE,
        /** Many readers, bounded by the server's {@code max-shared-holders-per-key} ({@code S} limit 0). */
        READ,
        /** A semaphore of {@code permits} ({@code S} limit n). */
        PERMITS
    }

    /** The largest limit the wire carries (u16). */
    public static final int MAX_LIMIT = 65535;

    /** An exclusive hold. */
    public static final HoldMode EXCLUSIVE = new HoldMode(Kind.EXCLUSIVE, 0);
    /** A read hold: the shared side of a read/write lock. */
    public static final HoldMode READ = new HoldMode(Kind.READ, 0);

    /** Small semaphores are common: their modes are shared, so a decoded {@code S} allocates none. */
    private static final HoldMode[] SMALL_PERMITS = new HoldMode[65];

    static {
        for (int n = 1; n < SMALL_PERMITS.length; n++) {
            SMALL_PERMITS[n] = new HoldMode(Kind.PERMITS, n);
        }
    }

    public HoldMode {
        if (kind == null) {
            throw new IllegalArgumentException("a hold mode needs a kind");
        }
        if (kind == Kind.PERMITS ? permits < 1 || permits > MAX_LIMIT : permits != 0) {
            throw new IllegalArgumentException(kind == Kind.PERMITS
                    ? "a semaphore has 1 to " + MAX_LIMIT + " permits, not " + permits
                    : kind + " has no permits (" + permits + ")");
        }
    }

    /** A semaphore of {@code n} permits, 1..65535. */
    public static HoldMode permits(int n) {
        return n > 0 && n < SMALL_PERMITS.length ? SMALL_PERMITS[n] : new HoldMode(Kind.PERMITS, n);
    }

    /** The shared mode an {@code S} frame's {@code limit} names: 0 a read lock, n a semaphore of n. */
    public static HoldMode ofLimit(int limit) {
        return limit == 0 ? READ : permits(limit);
    }

    /** True for a read or semaphore hold: several may hold the key at once. */
    public boolean isShared() {
        return kind != Kind.EXCLUSIVE;
    }

    /**
     * The limit an {@code S} frame, an {@code L} answer and a shared log entry carry: 0 for a read
     * lock, n for a semaphore of n.
     *
     * @throws IllegalStateException for {@link #EXCLUSIVE}, which has none
     */
    public int limit() {
        return switch (kind) {
            case READ -> 0;
            case PERMITS -> permits;
            case EXCLUSIVE -> throw new IllegalStateException("an exclusive hold has no shared limit");
        };
    }

    /**
     * How many holds of this mode a key admits at once: 1, {@code maxSharedPerKey} for a read
     * lock, or the permits.
     */
    public int slots(int maxSharedPerKey) {
        return switch (kind) {
            case EXCLUSIVE -> 1;
            case READ -> maxSharedPerKey;
            case PERMITS -> permits;
        };
    }

    /** As inspect and logs print it: {@code exclusive}, {@code read} or {@code permits(n)}. */
    @Override
    public String toString() {
        return switch (kind) {
            case EXCLUSIVE -> "exclusive";
            case READ -> "read";
            case PERMITS -> "permits(" + permits + ")";
        };
    }
}
