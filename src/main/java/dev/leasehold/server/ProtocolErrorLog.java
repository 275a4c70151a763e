package dev.leasehold.server;

import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.NanoClock;

/**
 * The log lines for sessions closed with {@code X}. A client that sends garbage in a loop would
 * otherwise write one WARN line per session (about 277 KB/s of log from one client, measured):
 * so the first protocol error is a WARN at once, further ones at most one WARN per
 * {@value #WARN_EVERY_SECONDS} s carrying the count of those held back, the rest at DEBUG.
 * The metric ({@code leasehold_protocol_errors_total}) counts every one regardless.
 *
 * <p>Logs under {@code dev.leasehold.server.SessionHandler}, the logger these lines always had.
 * One instance per server, shared by all sessions.
 */
final class ProtocolErrorLog {

    private static final Logger LOG = LoggerFactory.getLogger(SessionHandler.class);
    static final long WARN_EVERY_SECONDS = 10;

    private final WarnLimit limit;

    ProtocolErrorLog(NanoClock clock) {
        this.limit = new WarnLimit(clock, TimeUnit.SECONDS.toNanos(WARN_EVERY_SECONDS));
    }

    /** @param detail what the client may not see (e.g. the denied key and identity), or null */
    void closing(SocketAddress peer, ProtocolError error, String detail) {
        String extra = detail == null ? "" : ": " + detail;
        long more = limit.tryWarn();
        if (more < 0) {
            LOG.debug("Closing {}: protocol error {} ({}){}", peer, error.code().code(), error.message(), extra);
        } else {
            LOG.warn("Closing {}: protocol error {} ({}){}{}", peer, error.code().code(), error.message(), extra,
                    more == 0 ? "" : " (and " + more + " more since the last warning, logged at DEBUG; at most one"
                            + " WARN per " + WARN_EVERY_SECONDS + " s)");
        }
    }
}
