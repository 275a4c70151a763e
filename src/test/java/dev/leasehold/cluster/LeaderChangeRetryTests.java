package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.retry.RetryPolicy;
import org.junit.jupiter.api.Test;

/** When a membership change is resent: only while the leader is changing, and only before its deadline. */
class LeaderChangeRetryTests {

    private final AtomicLong now = new AtomicLong();
    private final LeaderChangeRetry retry = new LeaderChangeRetry(TimeUnit.SECONDS.toNanos(10), now::get);

    private static RetryPolicy.Event failure(Throwable cause) {
        return new RetryPolicy.Event() {
            @Override
            public int getAttemptCount() {
                return 1;
            }

            @Override
            public Throwable getCause() {
                return cause;
            }
        };
    }

    @Test
    void aNotLeaderOrNotReadyReplyIsResentAfterAPause() {
        // Ratis's blocking client passes no cause when the reply itself said "not leader".
        RetryPolicy.Action a = retry.handleAttemptFailure(failure(null));
        assertThat(a.shouldRetry()).isTrue();
        assertThat(a.getSleepTime().toLong(TimeUnit.MILLISECONDS)).isEqualTo(200);
        LeaderNotReadyException notReady = new LeaderNotReadyException(
                RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"), RaftGroupId.randomId()));
        assertThat(retry.handleAttemptFailure(failure(notReady)).shouldRetry()).isTrue();
    }

    @Test
    void aTimeoutIsNeverResent() {
        assertThat(retry.handleAttemptFailure(failure(new TimeoutIOException("no reply"))).shouldRetry()).isFalse();
    }

    @Test
    void nothingIsResentThatWouldStartAfterTheDeadline() {
        now.set(TimeUnit.MILLISECONDS.toNanos(9_700));
        assertThat(retry.handleAttemptFailure(failure(null)).shouldRetry()).isTrue();
        now.set(TimeUnit.MILLISECONDS.toNanos(9_900)); // the pause would end at the deadline
        assertThat(retry.handleAttemptFailure(failure(null)).shouldRetry()).isFalse();
    }
}
