package dev.leasehold.client.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.client.Ticket;

/** The one-shot commands: {@code acquire}, {@code release}, {@code extend}, {@code ping}. */
final class Commands {

    private Commands() {
    }

    /**
     * Acquires and prints the grant. Nothing releases it when the command line exits: the lock is
     * held until {@code release} or the end of its lease.
     */
    static int acquire(Context ctx) throws UsageException {
        String key = ctx.key();
        int wait = ctx.waitSeconds();
        int lease = ctx.leaseSeconds();
        try (LeaseholdClient client = ctx.client()) {
            AcquireOutcome outcome = client.acquire(key, wait, lease);
            if (!(outcome instanceof AcquireOutcome.Acquired acquired)) {
                return ctx.acquireFailure(key, wait, lease, outcome);
            }
            Ticket ticket = acquired.ticket();
            long validUntil = Context.epochMillis(ticket.validUntilNanos());
            Map<String, Object> m = Context.fields("acquired");
            m.put("key", key);
            m.put("token", Context.unsigned(ticket.token()));
            m.put("valid_until_ms", validUntil);
            m.put("lease_s", lease);
            return ctx.report(ExitCode.OK, "acquired " + Context.quote(key) + " token "
                    + Long.toUnsignedString(ticket.token()) + ", valid until " + Context.instant(validUntil)
                    + " (" + remaining(validUntil) + ")", m);
        }
    }

    /**
     * Releases a token. A Ping first tells an unreachable server (unavailable: nothing was sent)
     * from a release whose answer did not come (indeterminate).
     */
    static int release(Context ctx) throws UsageException {
        String key = ctx.key();
        long token = ctx.token();
        try (LeaseholdClient client = ctx.client()) {
            Integer unreachable = reach(ctx, client, key, token);
            if (unreachable != null) {
                return unreachable;
            }
            ReleaseOutcome r = client.release(key, token, Duration.ofMillis(ctx.timeoutMillis()));
            String t = Long.toUnsignedString(token);
            Map<String, Object> m = Context.fields(r == ReleaseOutcome.RELEASED ? "released"
                    : r == ReleaseOutcome.NOT_HELD ? "not_held" : "indeterminate");
            m.put("key", key);
            m.put("token", Context.unsigned(token));
            if (r == ReleaseOutcome.RELEASED) {
                return ctx.report(ExitCode.OK, "released " + Context.quote(key) + " token " + t, m);
            } else if (r == ReleaseOutcome.NOT_HELD) {
                return ctx.report(ExitCode.NOT_HELD, "not held: token " + t + " is not the active grant of "
                        + Context.quote(key) + " (its lease ended, or it was released)", m);
            }
            m.put("reason", "no answer within " + Durations.format(ctx.timeoutMillis()));
            return ctx.report(ExitCode.INDETERMINATE, "indeterminate: no answer to the release of token " + t
                    + " within " + Durations.format(ctx.timeoutMillis()) + "; if it is still held, it ends with"
                    + " its lease", m);
        }
    }

    /** Extends a token's lease and prints its new validity. */
    static int extend(Context ctx) throws UsageException {
        String key = ctx.key();
        long token = ctx.token();
        int lease = ctx.leaseSeconds();
        try (LeaseholdClient client = ctx.client()) {
            Integer unreachable = reach(ctx, client, key, token);
            if (unreachable != null) {
                return unreachable;
            }
            ExtendOutcome r = client.extend(key, token, lease, Duration.ofMillis(ctx.timeoutMillis()));
            String t = Long.toUnsignedString(token);
            Map<String, Object> m;
            if (r instanceof ExtendOutcome.Extended e) {
                long validUntil = Context.epochMillis(e.validUntilNanos());
                m = Context.fields("extended");
                m.put("key", key);
                m.put("token", Context.unsigned(token));
                m.put("valid_until_ms", validUntil);
                m.put("lease_s", lease);
                return ctx.report(ExitCode.OK, "extended " + Context.quote(key) + " token " + t + ", valid until "
                        + Context.instant(validUntil) + " (" + remaining(validUntil) + ")", m);
            }
            boolean notHeld = r instanceof ExtendOutcome.NotHeld;
            m = Context.fields(notHeld ? "not_held" : "indeterminate");
            m.put("key", key);
            m.put("token", Context.unsigned(token));
            if (notHeld) {
                return ctx.report(ExitCode.NOT_HELD, "not held: token " + t + " is not the active grant of "
                        + Context.quote(key) + " (its lease ended, or it was released)", m);
            }
            m.put("reason", "no answer within " + Durations.format(ctx.timeoutMillis()));
            return ctx.report(ExitCode.INDETERMINATE, "indeterminate: no answer to the extend of token " + t
                    + " within " + Durations.format(ctx.timeoutMillis()) + "; do not count on the extension", m);
        }
    }

    /** Pings the server and prints the round trip. */
    static int ping(Context ctx) throws UsageException {
        try (LeaseholdClient client = ctx.client()) {
            Duration rtt = client.ping();
            double ms = rtt.toNanos() / 1e6;
            Map<String, Object> m = Context.fields("pong");
            m.put("server", ctx.servers());
            m.put("rtt_ms", Math.round(ms * 1000) / 1000.0);
            return ctx.report(ExitCode.OK, String.format(java.util.Locale.ROOT, "pong from %s in %.3f ms",
                    ctx.servers(), ms), m);
        } catch (IOException e) {
            return unavailable(ctx, null, 0, e);
        }
    }

    /** Null if a Ping is answered; else the reported unavailable exit code. */
    private static Integer reach(Context ctx, LeaseholdClient client, String key, long token) {
        try {
            client.ping();
            return null;
        } catch (IOException e) {
            return unavailable(ctx, key, token, e);
        }
    }

    private static int unavailable(Context ctx, String key, long token, IOException e) {
        Map<String, Object> m = Context.fields("unavailable");
        if (key != null) {
            m.put("key", key);
            m.put("token", Context.unsigned(token));
        }
        m.put("server", ctx.servers());
        m.put("reason", String.valueOf(e.getMessage()));
        return ctx.report(ExitCode.UNAVAILABLE, "unavailable: cannot reach " + ctx.servers() + " ("
                + e.getMessage() + ")" + (key != null ? "; nothing was sent" : ""), m);
    }

    private static String remaining(long validUntilEpochMillis) {
        long left = validUntilEpochMillis - System.currentTimeMillis();
        return "in " + Durations.format(Math.max(0, left / 100 * 100));
    }
}
