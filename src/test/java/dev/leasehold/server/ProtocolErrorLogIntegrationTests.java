package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/** Protocol errors are logged at most once per interval at WARN, with a count; the metric stays exact. */
class ProtocolErrorLogIntegrationTests {

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(SessionHandler.class);
    private Level levelBefore;

    /** After a Spring start, which resets Logback's configuration. */
    void attach() {
        levelBefore = logger.getLevel();
        logger.setLevel(Level.DEBUG);
        appender.start();
        logger.addAppender(appender);
    }

    @AfterEach
    void detach() {
        logger.detachAppender(appender);
        logger.setLevel(levelBefore);
    }

    @Test
    void oneWarnPerIntervalCarryingTheCountOfTheOthers() {
        attach();
        AtomicLong now = new AtomicLong(1_000_000_000L);
        ProtocolErrorLog log = new ProtocolErrorLog(now::get);
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 5555);
        ProtocolError error = new ProtocolError(ErrorCode.UNKNOWN_OP, "unknown op 0xFF");
        for (int i = 0; i < 1000; i++) {
            log.closing(peer, error, null);
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1)); // 1,000 errors in one second
        }
        assertThat(warnings()).hasSize(1);
        assertThat(warnings().get(0)).contains("127.0.0.1:5555", "protocol error 1", "unknown op 0xFF")
                .doesNotContain("more since");
        assertThat(appender.list).filteredOn(e -> e.getLevel() == Level.DEBUG).hasSize(999);

        now.addAndGet(TimeUnit.SECONDS.toNanos(ProtocolErrorLog.WARN_EVERY_SECONDS) - TimeUnit.SECONDS.toNanos(1) - 1);
        log.closing(peer, error, "key \"k\" denied");
        assertThat(warnings()).as("one nanosecond before the interval ends").hasSize(1);
        now.addAndGet(1);
        log.closing(peer, error, "key \"k\" denied");
        assertThat(warnings()).hasSize(2);
        assertThat(warnings().get(1)).contains("(and 1000 more since the last warning", "key \"k\" denied");
    }

    @Test
    void garbageInALoopOverRealSocketsGivesOneWarnAndAnExactMetric() throws Exception {
        int sessions = 40;
        try (TestServer server = TestServer.start()) {
            ServerStats stats = server.bean(ServerStats.class);
            attach();
            for (int i = 0; i < sessions; i++) {
                try (RawClient bad = new RawClient(server.port())) {
                    bad.sendHex("FF");
                    assertThat(bad.next()).isInstanceOf(Answer.Error.class);
                }
            }
            assertThat(stats.protocolErrors(ErrorCode.UNKNOWN_OP)).isEqualTo(sessions);
            // 40 sessions take well under a second; the interval is 10 s, a slow CI may see a second WARN
            assertThat(warnings()).hasSizeBetween(1, 2);
            assertThat(appender.list).filteredOn(e -> e.getFormattedMessage().contains("protocol error"))
                    .hasSize(sessions);
        }
    }

    private List<String> warnings() {
        return appender.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage)
                .toList();
    }
}
