package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;

/**
 * The session pipeline (decoder, handler, a real registry) on an {@link EmbeddedChannel}: the
 * request examples of PROTOCOL.md section 3 in, the answer examples out, byte for byte; and what
 * the handler does with exceptions.
 */
class SessionPipelineTests {

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(SessionHandler.class);
    private final Level levelBefore = logger.getLevel();

    @AfterEach
    void detach() {
        logger.detachAppender(appender);
        logger.setLevel(levelBefore);
    }

    @Test
    void protocolExamplesInGiveTheProtocolExamplesOut() {
        EmbeddedChannel ch = pipeline(1000); // the registry's first token is 1000, as in the examples
        assertThat(exchange(ch, "41 0A 1E 0A 0A 0A 0A 0A 0A 0A 0A 6F 72 64 65 72 73 2F 34 32 0A"))
                .as("Acquired, same owner, token 1000, granted at once")
                .isEqualTo("41 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 00 00 00 03 E8 00 00 00 00 0A");
        assertThat(exchange(ch, "45 3C 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A"))
                .as("Extended").isEqualTo("45 00 00 00 00 00 00 03 E8 0A");
        assertThat(exchange(ch, "52 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A"))
                .as("Released").isEqualTo("52 00 00 00 00 00 00 03 E8 0A");
        assertThat(exchange(ch, "52 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A"))
                .as("Not held").isEqualTo("4E 00 00 00 00 00 00 03 E8 0A");
        assertThat(exchange(ch, "50 00 00 00 00 00 00 00 07 0A")).as("Pong").isEqualTo("50 00 00 00 00 00 00 00 07 0A");
        assertThat(exchange(ch, "41 00 05 00 00 00 00 00 00 00 01 63 61 66 C3 A9 0A"))
                .as("Acquired café, owner 1, token 1001")
                .isEqualTo("41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E9 00 00 00 00 0A");
        assertThat(exchange(ch, "41 00 05 00 00 00 00 00 00 00 02 63 61 66 C3 A9 0A"))
                .as("Timeout at once: wait 0 on a held key").isEqualTo("54 00 00 00 00 00 00 00 02 0A");
        assertThat(exchange(ch, "50 00 00 00 00 00 00 00 08 0A 5A"))
                .as("the Pong before the bad op, then X 1")
                .isEqualTo("50 00 00 00 00 00 00 00 08 0A 58 01 " + hex("unknown op 0x5A") + " 0A");
        assertThat(ch.isOpen()).as("closed after X (no half-close on an embedded channel)").isFalse();
        ch.finishAndReleaseAll();
    }

    /**
     * A Release that grants a waiter of its own session: the waiter's {@code A} joins the read
     * batch although the batch had no answer yet (the grant is decided before the {@code R} is
     * appended), so {@code A} and {@code R} leave in one buffer and one flush, and the hand-off is
     * timed once, after that flush. The clock moves 1 µs at every read, so the gap counts the
     * reads between the Release and the flush: more than none, far fewer than a thousand.
     */
    @Test
    void aHandOffWithinTheSessionLeavesWithTheReleaseInOneWriteAndIsTimedOnce() {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        dev.leasehold.registry.NanoClock clock = () -> now.addAndGet(1_000);
        java.util.List<Long> gaps = new java.util.ArrayList<>();
        RegistryObserver observer = new RegistryObserver() {
            @Override
            public void handedOff(long gapNanos) {
                gaps.add(gapNanos);
            }
        };
        AtomicLong tokens = new AtomicLong(999);
        LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), clock,
                tokens::incrementAndGet, LeaseHorizon.UNBOUNDED, new SessionNotifier(clock, observer),
                observer);
        RequestDecoder decoder = new RequestDecoder(512, TimeUnit.SECONDS.toNanos(10), clock);
        EmbeddedChannel ch = new EmbeddedChannel(decoder, new SessionHandler(new SessionHandler.Shared(registry,
                clock, new ServerStats(), null, new ProtocolErrorLog(clock), TimeUnit.SECONDS.toNanos(10),
                Outboxes.direct()), decoder));

        // owner 1 takes k (token 1000 = 0x3E8); owner 2 queues on it with wait 30 s
        assertThat(exchange(ch, "41 00 1E 00 00 00 00 00 00 00 01 6B 0A"))
                .isEqualTo("41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E8 00 00 00 00 0A");
        assertThat(exchange(ch, "41 1E 1E 00 00 00 00 00 00 00 02 6B 0A")).as("queued: nothing yet").isEmpty();
        assertThat(gaps).isEmpty();

        ch.writeInbound(Unpooled.wrappedBuffer(HexFormat.ofDelimiter(" ").parseHex("52 00 00 00 00 00 00 03 E8 6B 0A")));
        ByteBuf one = ch.readOutbound();
        assertThat(HexFormat.ofDelimiter(" ").withUpperCase().formatHex(ByteBufUtil.getBytes(one)))
                .as("A to owner 2 (token 1001) and R of token 1000, one buffer")
                .startsWith("41 00 00 00 00 00 00 00 02 00 00 00 00 00 00 03 E9")
                .endsWith("0A 52 00 00 00 00 00 00 03 E8 0A");
        one.release();
        assertThat((Object) ch.readOutbound()).as("no second write").isNull();
        assertThat(gaps).singleElement().satisfies(gap -> assertThat(gap).isBetween(1_000L, 1_000_000L));

        // releasing the last grant hands the key to nobody: no hand-off
        assertThat(exchange(ch, "52 00 00 00 00 00 00 03 E9 6B 0A")).isEqualTo("52 00 00 00 00 00 00 03 E9 0A");
        assertThat(gaps).hasSize(1);
        ch.finishAndReleaseAll();
    }

    /**
     * Revision 1.4 through the session, on a manual clock (PROTOCOL.md sections 14 and 15): {@code H}
     * answered at once with this node's max-wait and values off; an {@code M} of 200 ms on a held key
     * answered {@code T} no earlier than 200 ms and within the timer's resolution; a {@code W} of a
     * queued {@code M} answered by that acquire's {@code T} in the same read, the next waiter
     * granted by the holder's Release; an {@code M} with a value {@code X 3}.
     */
    @Test
    void helloMillisecondAcquireAndWithdrawOnAManualClock() {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        dev.leasehold.registry.NanoClock clock = now::get;
        AtomicLong tokens = new AtomicLong(999);
        LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), clock,
                tokens::incrementAndGet, LeaseHorizon.UNBOUNDED, new SessionNotifier(clock, RegistryObserver.NONE),
                RegistryObserver.NONE);
        RequestDecoder decoder = new RequestDecoder(512, TimeUnit.SECONDS.toNanos(10), clock, 1024, 300_000, 0);
        EmbeddedChannel ch = new EmbeddedChannel(decoder, new SessionHandler(new SessionHandler.Shared(registry,
                clock, new ServerStats(), null, new ProtocolErrorLog(clock), TimeUnit.SECONDS.toNanos(10),
                Outboxes.direct(), 300_000, 0), decoder));

        assertThat(exchange(ch, "48 01 04 0A")).as("H: revision 1.4, max-wait 300000 ms, values off")
                .isEqualTo("48 01 04 00 04 93 E0 00 00 0A");
        assertThat(exchange(ch, "41 00 1E 00 00 00 00 00 00 00 01 6B 0A")).as("owner 1 takes k, token 1000")
                .isEqualTo("41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E8 00 00 00 00 0A");
        assertThat(exchange(ch, "4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 02 00 00 00 00 6B 0A"))
                .as("M owner 2, wait 200 ms: queued").isEmpty();
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(199));
        registry.advance();
        assertThat(EmbeddedWire.written(ch)).as("no T before 200 ms").isEmpty();
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1) + RegistryTimer.PERIOD_MILLIS * 1_000_000);
        registry.advance();
        assertThat(EmbeddedWire.written(ch)).as("T within the timer's resolution").isEqualTo("54 00 00 00 00 00 00 00 02 0A");

        assertThat(exchange(ch, "4D 00 00 00 27 10 1E 00 00 00 00 00 00 00 03 00 00 00 00 6B 0A")
                + exchange(ch, "4D 00 00 00 27 10 1E 00 00 00 00 00 00 00 04 00 00 00 00 6B 0A"))
                .as("owners 3 and 4 queue, 10 s each").isEmpty();
        assertThat(exchange(ch, "57 00 00 00 00 00 00 00 03 6B 0A")).as("W owner 3: its T at once, nothing else")
                .isEqualTo("54 00 00 00 00 00 00 00 03 0A");
        assertThat(exchange(ch, "57 00 00 00 00 00 00 00 03 6B 0A")).as("W again: no match, no answer").isEmpty();
        assertThat(exchange(ch, "52 00 00 00 00 00 00 03 E8 6B 0A")).as("the Release grants owner 4, token 1001")
                .startsWith("41 00 00 00 00 00 00 00 04 00 00 00 00 00 00 03 E9")
                .endsWith("52 00 00 00 00 00 00 03 E8 0A");
        assertThat(exchange(ch, "4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 05 00 00 00 01"))
                .as("vlen 1 while values are off: X 3 from the header")
                .startsWith("58 03 ").contains(hex("leasehold.max-value-bytes"));
        ch.finishAndReleaseAll();
    }

    @Test
    void unexpectedExceptionIsAWarnWithThePeerAndClosesTheSession() {
        EmbeddedChannel ch = pipeline(1);
        attach();
        ch.pipeline().fireExceptionCaught(new IllegalStateException("registry bug"));
        assertThat(ch.isOpen()).isFalse();
        assertThat(appender.list).singleElement().satisfies(e -> {
            assertThat(e.getLevel()).isEqualTo(Level.WARN);
            assertThat(e.getFormattedMessage()).contains("Closing", "embedded");
            assertThat(e.getThrowableProxy().getMessage()).isEqualTo("registry bug");
        });
        ch.finishAndReleaseAll();
    }

    @Test
    void ioErrorsAreDebugOnly() {
        for (Throwable noise : new Throwable[] {new IOException("Connection reset by peer"), new ClosedChannelException(),
                new DecoderException(new javax.net.ssl.SSLException("bad record MAC"))}) {
            EmbeddedChannel ch = pipeline(1);
            attach();
            ch.pipeline().fireExceptionCaught(noise);
            assertThat(ch.isOpen()).isFalse();
            assertThat(appender.list).as("%s", noise).allMatch(e -> e.getLevel() == Level.DEBUG).hasSize(1);
            appender.list.clear();
            logger.detachAppender(appender);
            ch.finishAndReleaseAll();
        }
    }

    private void attach() {
        logger.setLevel(Level.DEBUG);
        appender.start();
        logger.addAppender(appender);
    }

    private static EmbeddedChannel pipeline(long firstToken) {
        AtomicLong tokens = new AtomicLong(firstToken - 1);
        LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), System::nanoTime,
                tokens::incrementAndGet, LeaseHorizon.UNBOUNDED, new SessionNotifier(), RegistryObserver.NONE);
        RequestDecoder decoder = new RequestDecoder(512, TimeUnit.SECONDS.toNanos(10), System::nanoTime);
        SessionHandler handler = new SessionHandler(new SessionHandler.Shared(registry, System::nanoTime,
                new ServerStats(), null, new ProtocolErrorLog(System::nanoTime), TimeUnit.SECONDS.toNanos(10),
                Outboxes.direct()), decoder);
        return new EmbeddedChannel(decoder, handler);
    }

    /** Writes the request bytes, returns every byte the session wrote back. */
    private static String exchange(EmbeddedChannel ch, String requestHex) {
        EmbeddedWire.write(ch, requestHex);
        return EmbeddedWire.written(ch);
    }

    private static String hex(String ascii) {
        return HexFormat.ofDelimiter(" ").withUpperCase().formatHex(ascii.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }
}
