package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.function.Function;

import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.util.LifeCycle;
import org.junit.jupiter.api.Test;

/**
 * What health and metrics read of a Raft division at each moment of its life, on values: Ratis
 * leaves the role null until the division's first transition, and a closing or reinitializing
 * division may fail a read. Each case was one a readiness probe or a Prometheus scrape could meet.
 */
class DivisionReadingTests {

    @Test
    void noDivisionReadsTheAbsentRoleAndZeros() {
        assertThat(DivisionReading.of(null, DivisionReading.STOPPED))
                .isEqualTo(new DivisionReading(DivisionReading.STOPPED, 0, 0, 0));
        assertThat(DivisionReading.of(null, "NO_STORAGE").role()).isEqualTo("NO_STORAGE");
    }

    @Test
    void aDivisionWithoutARoleYetReadsStartingInsteadOfThrowing() {
        // The NullPointerException of the README's test command: getCurrentRole() is null while
        // the division starts.
        RaftServer.Division d = division(new Info(null, LifeCycle.State.STARTING, 3, 7), log(9));
        DivisionReading r = DivisionReading.of(d, DivisionReading.STOPPED);
        assertThat(r).isEqualTo(new DivisionReading(DivisionReading.STARTING, 3, 9, 7));
        assertThat(DivisionReading.isRaftRole(r.role())).isFalse();
    }

    @Test
    void aDivisionWithoutInfoOrLogReadsStartingAndZeros() {
        assertThat(DivisionReading.of(division(null, log(5)), DivisionReading.STOPPED).role())
                .isEqualTo(DivisionReading.STARTING);
        assertThat(DivisionReading.of(division(new Info(RaftPeerRole.FOLLOWER, LifeCycle.State.RUNNING, 2, 4), null),
                DivisionReading.STOPPED)).isEqualTo(new DivisionReading("FOLLOWER", 2, 0, 4));
    }

    @Test
    void aClosingOrClosedDivisionReadsStoppedWhateverItsLastRole() {
        for (LifeCycle.State s : new LifeCycle.State[] {LifeCycle.State.CLOSING, LifeCycle.State.CLOSED}) {
            assertThat(DivisionReading.of(division(new Info(RaftPeerRole.LEADER, s, 4, 10), log(10)),
                    DivisionReading.STOPPED).role()).as("%s", s).isEqualTo(DivisionReading.STOPPED);
        }
    }

    @Test
    void aReadThatFailsReadsUnknown() {
        Info failing = new Info(RaftPeerRole.FOLLOWER, LifeCycle.State.RUNNING, 1, 1) {
            @Override
            public long getLastAppliedIndex() {
                throw new IllegalStateException("state machine reinitializing");
            }
        };
        assertThatCode(() -> DivisionReading.of(division(failing, log(1)), DivisionReading.STOPPED))
                .doesNotThrowAnyException();
        assertThat(DivisionReading.of(division(failing, log(1)), DivisionReading.STOPPED).role())
                .isEqualTo(DivisionReading.UNKNOWN);
        RaftServer.Division logFails = proxy(RaftServer.Division.class, Map.of(
                "getInfo", a -> new Info(RaftPeerRole.LEADER, LifeCycle.State.RUNNING, 1, 1),
                "getRaftLog", a -> {
                    throw new IllegalStateException("log closed");
                }));
        assertThat(DivisionReading.of(logFails, DivisionReading.STOPPED).role()).isEqualTo(DivisionReading.UNKNOWN);
    }

    @Test
    void aRunningDivisionReadsItsRoleTermAndIndexes() {
        assertThat(DivisionReading.of(division(new Info(RaftPeerRole.LEADER, LifeCycle.State.RUNNING, 5, 41), log(42)),
                DivisionReading.STOPPED)).isEqualTo(new DivisionReading("LEADER", 5, 42, 41));
        assertThat(DivisionReading.isRaftRole("LEADER")).isTrue();
        assertThat(DivisionReading.isRaftRole("LISTENER")).isTrue();
        assertThat(DivisionReading.isRaftRole("NO_STORAGE")).isFalse();
    }

    @Test
    void aStartingNodeIsNeitherReadyNorRunningEvenWithALeaderKnownFromBefore() {
        ClusterNode.Status starting = status(DivisionReading.STARTING, "n1");
        assertThat(starting.ready()).isFalse();
        assertThat(starting.notYetRunning()).contains("starting");
        ClusterNode.Status unknown = status(DivisionReading.UNKNOWN, "n1");
        assertThat(unknown.ready()).isFalse();
        assertThat(unknown.notYetRunning()).contains("could not be read");
        ClusterNode.Status follower = status("FOLLOWER", "n1");
        assertThat(follower.ready()).isTrue();
        assertThat(follower.notYetRunning()).isNull();
        assertThat(status(DivisionReading.STOPPED, "n1").ready()).isFalse();
    }

    static ClusterNode.Status status(String role, String leader) {
        return new ClusterNode.Status("n2", role, false, 3, leader, 10, 10, 1, 0, 0, Formation.Storage.FORMED);
    }

    private static RaftServer.Division division(DivisionInfo info, RaftLog log) {
        return proxy(RaftServer.Division.class, Map.of("getInfo", a -> info, "getRaftLog", a -> log));
    }

    private static RaftLog log(long committed) {
        return proxy(RaftLog.class, Map.of("getLastCommittedIndex", a -> committed));
    }

    /** A fake of a wide Ratis interface answering only the named methods (others fail the test). */
    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, Map<String, Function<Object[], Object>> answers) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
            Function<Object[], Object> a = answers.get(m.getName());
            if (a == null) {
                throw new AssertionError("unexpected call " + type.getSimpleName() + "." + m.getName());
            }
            return a.apply(args);
        });
    }

    /** A division's info at one moment; a null role is what Ratis returns before the first transition. */
    private static class Info implements DivisionInfo {
        private final RaftPeerRole role;
        private final LifeCycle.State life;
        private final long term;
        private final long applied;

        Info(RaftPeerRole role, LifeCycle.State life, long term, long applied) {
            this.role = role;
            this.life = life;
            this.term = term;
            this.applied = applied;
        }

        @Override
        public RaftPeerRole getCurrentRole() {
            return role;
        }

        @Override
        public boolean isLeaderReady() {
            return false;
        }

        @Override
        public RaftPeerId getLeaderId() {
            return null;
        }

        @Override
        public LifeCycle.State getLifeCycleState() {
            return life;
        }

        @Override
        public RoleInfoProto getRoleInfoProto() {
            throw new AssertionError("not read for status");
        }

        @Override
        public long getCurrentTerm() {
            return term;
        }

        @Override
        public long getLastAppliedIndex() {
            return applied;
        }

        @Override
        public long[] getFollowerNextIndices() {
            return null;
        }

        @Override
        public long[] getFollowerMatchIndices() {
            return null;
        }
    }
}
