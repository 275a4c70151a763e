package dev.leasehold.client;

import dev.leasehold.client.internal.Watch;

/**
 * Following a key ({@link LeaseholdClient#observe}, PROTOCOL.md 9.15): the key's state, then every
 * change, to an {@link ObservationListener}, until {@link #close()}. The client subscribes with
 * the leader (following {@code X 8} as acquires do) for as long as the observation is open, with
 * no deadline; when the subscription ends (the session broke, the leader changed, the server
 * refused it) the listener hears {@code unknown} once and the client subscribes again, 50 ms
 * doubling to 500 ms between attempts, over the seed list. Tokens never go back within an
 * observation, across its subscriptions too. Thread-safe.
 */
public final class Observation implements AutoCloseable {

    private final Watch watch;

    Observation(Watch watch) {
        this.watch = watch;
    }

    /** The watch's deliveries in public words: a {@link KeyEvent} of {@code key}, or unknown. */
    static Watch.Listener adapter(String key, ObservationListener listener) {
        return new Watch.Listener() {
            @Override
            public void event(Watch.Seen e) {
                listener.event(new KeyEvent(key, state(e.state()), KeyEvent.Cause.values()[e.cause()], e.coalesced(),
                        e.token(), e.count(), e.limit(), e.value()));
            }

            @Override
            public void unknown(String reason) {
                listener.unknown(reason);
            }
        };
    }

    private static KeyEvent.State state(int wire) {
        return switch (wire) {
            case 'F' -> KeyEvent.State.FREE;
            case 'H' -> KeyEvent.State.HELD;
            case 'D' -> KeyEvent.State.LOCK_DELAY;
            case 'S' -> KeyEvent.State.SHARED;
            default -> KeyEvent.State.RECOVERY_GRACE; // 'G': the watch delivers no other byte
        };
    }

    /** The observed key. */
    public String key() {
        return watch.key();
    }

    /** True once {@link #close()} was called. */
    public boolean isClosed() {
        return watch.isClosed();
    }

    /**
     * Stops observing: sends {@code U} if the subscription's session is open. No listener call
     * begins after this returns; one in progress on another thread is waited for, so do not call
     * it while holding a lock that the listener takes. Idempotent.
     */
    @Override
    public void close() {
        watch.close();
    }

    @Override
    public String toString() {
        return "Observation[key=" + key() + (isClosed() ? ", closed" : "") + "]";
    }
}
