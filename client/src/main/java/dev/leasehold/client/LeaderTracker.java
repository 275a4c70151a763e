package dev.leasehold.client;

import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Turns an {@link Observation}'s events on an election's key into {@link LeaderListener} calls:
 * {@code HELD} with a higher token is a new term (once per term), {@code VALUE_SET} a proclaim,
 * {@code FREE}, {@code LOCK_DELAY} (and a shared hold, a misuse of the key) no leader, recovery
 * grace and unknown unknown. Keeps the last leader seen for {@link Election#leader()}.
 */
final class LeaderTracker implements ObservationListener {

    private final LeaderListener listener;
    private final Executor calls;
    private long lastTerm;
    /** Null: nobody leads or it is not known. Guarded by {@code this}. */
    private Leader current;
    /** The listener was last told unknown: the next event ends the gap with a call. Guarded by {@code this}. */
    private boolean gap = true;

    LeaderTracker(LeaderListener listener, Executor calls) {
        this.listener = listener;
        this.calls = calls;
    }

    /** The last leader seen, if one leads as far as the last event says. */
    synchronized Optional<Leader> leader() {
        return Optional.ofNullable(current);
    }

    @Override
    public void event(KeyEvent e) {
        Runnable call;
        synchronized (this) {
            call = decide(e);
        }
        if (call != null) {
            calls.execute(call);
        }
    }

    /** Under the monitor: the listener call this event makes, or null. */
    private Runnable decide(KeyEvent e) {
        boolean endsGap = gap;
        gap = false;
        switch (e.state()) {
            case HELD -> {
                Leader seen = new Leader(e.token(), e.valueText());
                boolean newTerm = e.token() > lastTerm;
                boolean changed = !seen.equals(current);
                current = seen;
                if (newTerm) {
                    lastTerm = e.token();
                    return () -> listener.onNewLeader(seen.term(), seen.identity());
                }
                return changed ? () -> listener.onProclaimed(seen.term(), seen.identity()) : null;
            }
            case RECOVERY_GRACE -> {
                return unknownNow("the server is in its recovery grace");
            }
            default -> {
                boolean had = current != null || endsGap;
                lastTerm = Math.max(lastTerm, e.token());
                current = null;
                return had ? listener::onNoLeader : null;
            }
        }
    }

    @Override
    public void unknown(String reason) {
        Runnable call;
        synchronized (this) {
            call = unknownNow(reason);
        }
        calls.execute(call);
    }

    private Runnable unknownNow(String reason) {
        current = null;
        gap = true;
        return () -> listener.onLeaderUnknown(reason);
    }
}
