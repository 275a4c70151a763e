package dev.leasehold.client.cli;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.leasehold.client.KeyEvent;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Observation;
import dev.leasehold.client.ObservationListener;
import dev.leasehold.protocol.Keys;
import dev.leasehold.protocol.Utf8;

/**
 * {@code leasehold observe --key K [--once] [--json]} (PROTOCOL.md 9.15): the key's state now, then
 * each change, one line each, until interrupted; {@code unknown} lines while the state cannot be
 * known (the client subscribes again by itself). With {@code --once}: the first event, then exit
 * 0, or 68 (unavailable) if none came within {@code --timeout}.
 */
final class ObserveCommand {

    private ObserveCommand() {
    }

    static int execute(Context ctx) throws UsageException, InterruptedException {
        String key = ctx.key();
        boolean once = ctx.line().has("--once");
        CountDownLatch first = new CountDownLatch(1);
        String[] lastUnknown = {null};
        ObservationListener printer = new ObservationListener() {
            @Override
            public void event(KeyEvent e) {
                if (once && first.getCount() == 0) {
                    return;
                }
                print(ctx, e);
                first.countDown();
            }

            @Override
            public void unknown(String reason) {
                synchronized (lastUnknown) {
                    lastUnknown[0] = reason;
                }
                if (!once) {
                    printUnknown(ctx, key, reason);
                }
            }
        };
        try (LeaseholdClient client = ctx.client(); Observation observation = client.observe(key, printer)) {
            if (!once) {
                new CountDownLatch(1).await(); // until the process is interrupted (Ctrl-C)
            }
            if (first.await(ctx.timeoutMillis(), TimeUnit.MILLISECONDS)) {
                return ExitCode.OK.code();
            }
            observation.close(); // no line after the report
            String why;
            synchronized (lastUnknown) {
                why = lastUnknown[0];
            }
            Map<String, Object> m = Context.fields("unavailable");
            m.put("key", key);
            m.put("reason", why == null ? "no event" : why);
            return ctx.report(ExitCode.UNAVAILABLE, "unavailable: no event for " + Context.quote(key) + " within "
                    + Durations.format(ctx.timeoutMillis()) + (why == null ? "" : " (" + why + ")"), m);
        } catch (IllegalStateException e) {
            Map<String, Object> m = Context.fields("unavailable");
            m.put("key", key);
            m.put("reason", e.getMessage());
            return ctx.report(ExitCode.UNAVAILABLE, "unavailable: " + e.getMessage(), m);
        }
    }

    private static void print(Context ctx, KeyEvent e) {
        String state = e.state().name().toLowerCase(Locale.ROOT);
        String cause = e.cause().name().toLowerCase(Locale.ROOT);
        if (ctx.json()) {
            Map<String, Object> m = Context.fields("event");
            m.put("key", e.key());
            m.put("state", state);
            m.put("cause", cause);
            m.put("coalesced", e.coalesced());
            m.put("token", Context.unsigned(e.token()));
            m.put("count", e.count());
            m.put("limit", e.limit());
            byte[] v = e.value();
            if (Utf8.isValid(v)) {
                m.put("value", e.valueText());
            } else {
                m.put("value_hex", java.util.HexFormat.of().formatHex(v));
            }
            line(ctx, Json.object(m));
            return;
        }
        StringBuilder b = new StringBuilder(Context.quote(e.key())).append(' ').append(state.replace('_', ' '));
        if (e.state() == KeyEvent.State.SHARED) {
            b.append(' ').append(e.count()).append(e.limit() == 0 ? " readers" : " of " + e.limit());
        }
        b.append(" token ").append(Long.toUnsignedString(e.token()));
        byte[] v = e.value();
        if (v.length > 0) {
            b.append(" value ").append(Utf8.isValid(v) ? Keys.printable(v) : "0x" + java.util.HexFormat.of().formatHex(v));
        }
        b.append(" (").append(cause.replace('_', ' ')).append(e.coalesced() ? ", coalesced" : "").append(')');
        line(ctx, b.toString());
    }

    private static void printUnknown(Context ctx, String key, String reason) {
        if (ctx.json()) {
            Map<String, Object> m = Context.fields("unknown");
            m.put("key", key);
            m.put("reason", reason);
            line(ctx, Json.object(m));
        } else {
            line(ctx, Context.quote(key) + " unknown (" + reason + ")");
        }
    }

    private static void line(Context ctx, String text) {
        synchronized (ctx) {
            ctx.out().println(text);
            ctx.out().flush();
        }
    }
}
