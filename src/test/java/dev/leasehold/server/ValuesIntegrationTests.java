package dev.leasehold.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * Values (PROTOCOL.md section 17) against the real server over real sockets, with the default
 * {@code leasehold.max-value-bytes} (256) and a lock-delay of 3 s: the matrix rows of 17.3, the
 * {@code M}-with-value rows of 14.3, the {@code X 3} decided from a fixed header before any value
 * byte (only the header is sent), and 0x0A inside values. What a holder's value is comes from the
 * server's registry, as inspect reads it ({@code LockRegistry.inspect}).
 */
class ValuesIntegrationTests {

    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("leasehold.lock-delay", "3s"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    /** The value inspect shows next to the holder's token, or null. */
    private static byte[] shown(String key) {
        return server.bean(LockRegistry.class).inspect(b(key), 0).value();
    }

    private static long grant(RawClient c, String key, long owner) throws Exception {
        return ((Answer.Acquired) c.send(new Request.Acquire(0, 30, owner, b(key))).next()).token();
    }

    private static Request.MilliAcquire m(long waitMillis, int lease, long owner, String value, String key) {
        return new Request.MilliAcquire(0, waitMillis, lease, owner, 0, b(value), b(key));
    }

    @Test
    void helloReportsTheDefaultMaxValueBytes() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            assertThat(c.send(new Request.Hello(Wire.REVISION_1_4)).next()).isEqualTo(new Answer.Hello(0x0104, 255_000, 256));
        }
    }

    /** 17.3, HELD and QUEUED: a V of the active exclusive grant sets, replaces and clears its value. */
    @Test
    void aVOfTheActiveExclusiveGrantSetsReplacesAndClearsItsValue() throws Exception {
        try (RawClient holder = new RawClient(server.port()); RawClient waiter = new RawClient(server.port())) {
            long t = grant(holder, "v/held", 1);
            assertThat(shown("v/held")).as("a grant made by A has none").isNull();
            assertThat(holder.send(new Request.SetValue(t, b("n1"), b("v/held"))).next()).isEqualTo(new Answer.ValueSet(t));
            assertThat(shown("v/held")).isEqualTo(b("n1"));
            assertThat(holder.send(new Request.SetValue(t, b("n1"), b("v/held"))).next())
                    .as("the same value again: V").isEqualTo(new Answer.ValueSet(t));
            waiter.send(Request.MilliAcquire.exclusive(30_000, 30, 2, b("v/held")), new Request.Ping(2));
            assertThat(waiter.next()).isEqualTo(new Answer.Pong(2));
            assertThat(holder.send(new Request.SetValue(t, b("n2"), b("v/held"))).next())
                    .as("QUEUED: still the holder's").isEqualTo(new Answer.ValueSet(t));
            assertThat(shown("v/held")).isEqualTo(b("n2"));
            assertThat(holder.send(new Request.Extend(60, t, b("v/held"))).next()).isEqualTo(new Answer.Extended(t));
            assertThat(shown("v/held")).as("kept by Extend").isEqualTo(b("n2"));
            assertThat(holder.send(new Request.SetValue(t, new byte[0], b("v/held"))).next())
                    .as("vlen 0 clears").isEqualTo(new Answer.ValueSet(t));
            assertThat(shown("v/held")).isNull();
            holder.send(new Request.SetValue(t, b("n3"), b("v/held"))).next();
            assertThat(holder.send(new Request.Release(t, b("v/held"))).next()).isEqualTo(new Answer.Released(t));
            Answer.Acquired next = (Answer.Acquired) waiter.next();
            assertThat(shown("v/held")).as("hand-off: the next holder's M had no value").isNull();
            assertThat(holder.send(new Request.SetValue(t, b("n4"), b("v/held"))).next())
                    .as("the released token").isEqualTo(new Answer.NotHeld(t));
            assertThat(shown("v/held")).isNull();
            assertThat(server.bean(LockRegistry.class).inspect(b("v/held"), 0).token()).isEqualTo(next.token());
        }
    }

    /** 17.3: any other token is N, on a FREE, HELD, SHARED or DELAYED key, and changes nothing. */
    @Test
    void aVOfAnyOtherTokenIsNAndChangesNothing() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            assertThat(c.send(new Request.SetValue(1, b("x"), b("v/free"))).next()).as("FREE").isEqualTo(new Answer.NotHeld(1));
            long t = ((Answer.Acquired) c.send(m(0, 30, 1, "mine", "v/other")).next()).token();
            assertThat(c.send(new Request.SetValue(t + 1000, b("x"), b("v/other"))).next()).isEqualTo(new Answer.NotHeld(t + 1000));
            assertThat(c.send(new Request.SetValue(0, b("x"), b("v/other"))).next()).as("token 0").isEqualTo(new Answer.NotHeld(0));
            assertThat(c.send(new Request.SetValue(t, b("x"), b("v/free"))).next()).as("another key").isEqualTo(new Answer.NotHeld(t));
            assertThat(shown("v/other")).isEqualTo(b("mine"));
            long read = ((Answer.Acquired) c.send(new Request.SharedAcquire(0, 30, 2, 0, b("v/shared"))).next()).token();
            assertThat(c.send(new Request.SetValue(read, b("x"), b("v/shared"))).next()).as("SHARED")
                    .isEqualTo(new Answer.NotHeld(read));
        }
    }

    /** 17.3: the value ends with its lease; the key in lock-delay (DELAYED) answers its token N. */
    @Test
    void theValueEndsWithTheLeaseAndAVInLockDelayIsN() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            long t = ((Answer.Acquired) c.send(m(0, 1, 1, "brief", "v/lock-delay")).next()).token();
            assertThat(shown("v/lock-delay")).isEqualTo(b("brief"));
            Thread.sleep(1_200); // the 1 s lease must really end (leases are whole seconds); 3 s of lock-delay follow
            assertThat(c.send(new Request.SetValue(t, b("late"), b("v/lock-delay"))).next()).isEqualTo(new Answer.NotHeld(t));
            assertThat(server.bean(LockRegistry.class).inspect(b("v/lock-delay"), 0).state().label()).isEqualTo("delayed");
            assertThat(shown("v/lock-delay")).isNull();
        }
    }

    /** 14.3's M rows with a value: FREE grants with it; a held key times out or queues it, shown nowhere until granted. */
    @Test
    void anMWithAValueIsGrantedWithItAndAQueuedOnesValueIsShownOnlyOnceGranted() throws Exception {
        try (RawClient a = new RawClient(server.port()); RawClient b = new RawClient(server.port())) {
            Answer.Acquired first = (Answer.Acquired) a.send(m(0, 30, 1, "n1", "v/campaign")).next();
            assertThat(first.queuedMs()).isZero();
            assertThat(shown("v/campaign")).isEqualTo(b("n1"));
            assertThat(b.send(m(0, 30, 2, "n2", "v/campaign")).next()).as("wait_ms 0 on a held key").isEqualTo(new Answer.TimedOut(2));
            b.send(m(30_000, 30, 3, "n3", "v/campaign"), new Request.Ping(3));
            assertThat(b.next()).isEqualTo(new Answer.Pong(3));
            assertThat(shown("v/campaign")).as("a queued M's value is shown nowhere").isEqualTo(b("n1"));
            assertThat(a.send(new Request.Release(first.token(), b("v/campaign"))).next()).isEqualTo(new Answer.Released(first.token()));
            Answer.Acquired second = (Answer.Acquired) b.next();
            assertThat(second.owner()).isEqualTo(3);
            assertThat(second.token()).isGreaterThan(first.token());
            assertThat(shown("v/campaign")).as("granted from the queue with its own value").isEqualTo(b("n3"));
            assertThat(b.send(new Request.Release(second.token(), b("v/campaign"))).next()).isEqualTo(new Answer.Released(second.token()));
            assertThat(shown("v/campaign")).isNull();
        }
    }

    /** Values may hold 0x0A anywhere: read by count, never taken for the terminator (14.2, 17.1). */
    @Test
    void valuesHoldingNewlinesAreReadByCount() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            // 14.7's campaign example, byte for byte: owner and value bytes full of 0x0A.
            c.sendHex("4D 00 00 03 E4 18 0F 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 02 6E 31 6C 65 61 64 0A");
            Answer.Acquired g = (Answer.Acquired) c.next();
            assertThat(g.owner()).isEqualTo(0x0A0A0A0A0A0A0A0AL);
            assertThat(shown("lead")).isEqualTo(b("n1"));
            byte[] newlines = new byte[256];
            Arrays.fill(newlines, (byte) 0x0A);
            assertThat(c.send(new Request.SetValue(g.token(), newlines, b("lead"))).next()).isEqualTo(new Answer.ValueSet(g.token()));
            assertThat(shown("lead")).isEqualTo(newlines);
            assertThat(c.send(new Request.SetValue(g.token(), new byte[] {'a', 0x0A, 'b'}, b("lead")), new Request.Ping(9)).next())
                    .isEqualTo(new Answer.ValueSet(g.token()));
            assertThat(c.next()).as("the session goes on after the value's 0x0A").isEqualTo(new Answer.Pong(9));
            assertThat(shown("lead")).containsExactly('a', 0x0A, 'b');
            c.send(new Request.Release(g.token(), b("lead"))).next();
        }
    }

    /**
     * 14.4 and 17.5: these X 3 are decided from the fixed header alone, so only the header is sent
     * (no value, no key, no terminator) and the answer comes, then the session closes.
     */
    @Test
    void headerChecksAreDecidedBeforeAnyValueByte() throws Exception {
        String[][] headers = {
            {"4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 01 01", "vlen 257 in M is above leasehold.max-value-bytes (256)"},
            {"4D 01 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 01", "shared M"},
            {"56 00 00 00 00 00 00 04 12 01 01", "vlen 257 in V is above leasehold.max-value-bytes (256)"},
            {"4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 04 01", "vlen 1025"},
        };
        for (String[] h : headers) {
            try (RawClient c = new RawClient(server.port())) {
                c.sendBytes(HexFormat.ofDelimiter(" ").parseHex(h[0]));
                Answer x = c.next(5_000);
                assertThat(x).as(h[0]).isInstanceOf(Answer.Error.class);
                assertThat(((Answer.Error) x).code()).as(h[0]).isEqualTo(3);
                assertThat(((Answer.Error) x).message()).as(h[0]).contains(h[1]);
                assertThat(c.closedByServer(3_000)).as(h[0]).isTrue();
            }
        }
    }
}
