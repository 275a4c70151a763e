package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * How an election's observation turns key events into {@link LeaderListener} calls: a new term
 * once (terms strictly increasing), a proclaim of the same term, no leader on a release, expiry or
 * lock-delay, unknown on a gap or the recovery grace, and {@link Election#leader()}'s view of it.
 */
class LeaderTrackerTests {

    private final List<String> heard = new ArrayList<>();
    private final LeaderTracker tracker = new LeaderTracker(new LeaderListener() {
        @Override
        public void onNewLeader(long term, String identity) {
            heard.add("new " + term + " " + identity);
        }

        @Override
        public void onProclaimed(long term, String value) {
            heard.add("proclaimed " + term + " " + value);
        }

        @Override
        public void onNoLeader() {
            heard.add("none");
        }

        @Override
        public void onLeaderUnknown(String reason) {
            heard.add("unknown");
        }
    }, Runnable::run);

    private static KeyEvent event(KeyEvent.State state, KeyEvent.Cause cause, long token, String value) {
        return new KeyEvent("e", state, cause, false, token, state == KeyEvent.State.HELD ? 1 : 0, 0,
                value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void eachTermIsANewLeaderOnceAndAProclaimIsNotANewTerm() {
        tracker.event(event(KeyEvent.State.FREE, KeyEvent.Cause.CURRENT, 0, ""));
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.GRANT, 7, "a"));
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.VALUE_SET, 7, "a at 10.0.0.1"));
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.GRANT, 9, "b"));
        assertThat(tracker.leader()).contains(new Leader(9, "b"));
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.CURRENT, 9, "b")); // a resubscription, same term
        assertThat(heard).containsExactly("none", "new 7 a", "proclaimed 7 a at 10.0.0.1", "new 9 b");
    }

    @Test
    void releaseExpiryAndLockDelayAreNoLeaderOnce() {
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.CURRENT, 3, "a"));
        tracker.event(event(KeyEvent.State.LOCK_DELAY, KeyEvent.Cause.EXPIRY, 3, ""));
        tracker.event(event(KeyEvent.State.FREE, KeyEvent.Cause.LOCK_DELAY_END, 3, ""));
        assertThat(tracker.leader()).isEmpty();
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.GRANT, 4, "b"));
        tracker.event(event(KeyEvent.State.FREE, KeyEvent.Cause.RELEASE, 4, ""));
        assertThat(heard).containsExactly("new 3 a", "none", "new 4 b", "none");
    }

    @Test
    void aGapIsUnknownAndTheSameTermAfterItIsNotANewLeader() {
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.CURRENT, 5, "a"));
        tracker.unknown("the session broke");
        assertThat(tracker.leader()).as("not known in a gap").isEmpty();
        tracker.event(event(KeyEvent.State.HELD, KeyEvent.Cause.CURRENT, 5, "a"));
        assertThat(tracker.leader()).contains(new Leader(5, "a"));
        tracker.event(event(KeyEvent.State.RECOVERY_GRACE, KeyEvent.Cause.CURRENT, 5, ""));
        tracker.event(event(KeyEvent.State.FREE, KeyEvent.Cause.RECOVERY_GRACE_END, 5, ""));
        assertThat(heard).containsExactly("new 5 a", "unknown", "proclaimed 5 a", "unknown", "none");
    }
}
