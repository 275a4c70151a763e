package dev.leasehold.client.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.CheckOutcome;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.client.Ticket;

/** The one-shot commands: {@code acquire}, {@code release}, {@code extend}, {@code check}, {@code ping}. */
final class Commands {

    private Commands() {
    }

    /**
     * Acquires and prints the grant. Nothing releases it when the command line exits: the lock is
     * held until {@code release} or the end of its lease.
     */
    static int acquire(Context ctx) throws UsageException {
        String key = ctx.key();
        long wait = ctx.waitMillis();
        int lease = ctx.leaseSeconds();
        HoldMode mode = ctx.holdMode();
        byte[] value = ctx.value();
        try (LeaseholdClient client = ctx.client()) {
            AcquireOutcome outcome = Context.acquire(client, key, mode, wait, lease, value);
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
            if (mode.isShared()) {
                m.put("shared_limit", mode.limit());
            }
            return ctx.report(ExitCode.OK, "acquired " + (mode.isShared() ? "shared " : "") + Context.quote(key) + " token "
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
        return onToken(ctx, key, token, client -> {
            ReleaseOutcome r = client.release(key, token, Duration.ofMillis(ctx.timeoutMillis()));
            if (r == ReleaseOutcome.RELEASED) {
                return ctx.report(ExitCode.OK, "released " + Context.quote(key) + " token " + Long.toUnsignedString(token),
                        tokenFields("released", key, token));
            }
            return r == ReleaseOutcome.NOT_HELD ? notHeld(ctx, key, token)
                    : indeterminate(ctx, "release", key, token, "if it is still held, it ends with its lease");
        });
    }

    /** Extends a token's lease and prints its new validity. */
    static int extend(Context ctx) throws UsageException {
        String key = ctx.key();
        long token = ctx.token();
        int lease = ctx.leaseSeconds();
        return onToken(ctx, key, token, client -> {
            ExtendOutcome r = client.extend(key, token, lease, Duration.ofMillis(ctx.timeoutMillis()));
            if (r instanceof ExtendOutcome.Extended e) {
                long validUntil = Context.epochMillis(e.validUntilNanos());
                Map<String, Object> m = tokenFields("extended", key, token);
                m.put("valid_until_ms", validUntil);
                m.put("lease_s", lease);
                return ctx.report(ExitCode.OK, "extended " + Context.quote(key) + " token " + Long.toUnsignedString(token)
                        + ", valid until " + Context.instant(validUntil) + " (" + remaining(validUntil) + ")", m);
            }
            return r instanceof ExtendOutcome.NotHeld ? notHeld(ctx, key, token)
                    : indeterminate(ctx, "extend", key, token, "do not count on the extension");
        });
    }

    /**
     * Asks whether a token is still the key's active grant (PROTOCOL.md section 11): exit 0 for
     * current, 70 for not current, 67 when no answer came (treat it as not current).
     */
    static int check(Context ctx) throws UsageException {
        String key = ctx.key();
        long token = ctx.token();
        return onToken(ctx, key, token, client -> {
            CheckOutcome r = client.check(key, token, Duration.ofMillis(ctx.timeoutMillis()));
            if (r instanceof CheckOutcome.Current) {
                return ctx.report(ExitCode.OK, "current: token " + Long.toUnsignedString(token)
                        + " is the active grant of " + Context.quote(key), tokenFields("current", key, token));
            }
            if (r instanceof CheckOutcome.NotCurrent) {
                return ctx.report(ExitCode.NOT_HELD, "not current: token " + Long.toUnsignedString(token)
                        + " is not the active grant of " + Context.quote(key) + " (released, expired or never issued)",
                        tokenFields("not_current", key, token));
            }
            return indeterminate(ctx, "check", key, token, "treat the token as not current");
        });
    }

    /** What release and extend do once the server is known reachable. */
    @FunctionalInterface
    private interface TokenCommand {
        int run(LeaseholdClient client);
    }

    /**
     * The shared shape of release and extend: a client, then a Ping first, which tells an
     * unreachable server (unavailable: nothing was sent) from a call whose answer did not come
     * (indeterminate); then the command.
     */
    private static int onToken(Context ctx, String key, long token, TokenCommand command) throws UsageException {
        try (LeaseholdClient client = ctx.client()) {
            Integer unreachable = reach(ctx, client, key, token);
            return unreachable != null ? unreachable : command.run(client);
        }
    }

    private static Map<String, Object> tokenFields(String status, String key, long token) {
        Map<String, Object> m = Context.fields(status);
        m.put("key", key);
        m.put("token", Context.unsigned(token));
        return m;
    }

    private static int notHeld(Context ctx, String key, long token) {
        return ctx.report(ExitCode.NOT_HELD, "not held: token " + Long.toUnsignedString(token)
                + " is not the active grant of " + Context.quote(key) + " (its lease ended, or it was released)",
                tokenFields("not_held", key, token));
    }

    private static int indeterminate(Context ctx, String call, String key, long token, String consequence) {
        Map<String, Object> m = tokenFields("indeterminate", key, token);
        m.put("reason", "no answer within " + Durations.format(ctx.timeoutMillis()));
        return ctx.report(ExitCode.INDETERMINATE, "indeterminate: no answer to the " + call + " of token "
                + Long.toUnsignedString(token) + " within " + Durations.format(ctx.timeoutMillis()) + "; " + consequence, m);
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
