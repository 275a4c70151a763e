package dev.leasehold.client.cli;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.client.Ticket;

/**
 * {@code run}: acquire, run a command while holding the lock, release when it exits.
 *
 * <p><b>Timeline.</b> With the ticket's local validity {@code V} (a {@link System#nanoTime()}
 * deadline: the server's lease cannot have ended before it, PROTOCOL.md 9.6), the command must be
 * dead before {@code V}. So the supervisor
 * <ul>
 * <li>extends the lease every {@code interval = min(lease, lease - killGrace - safety) / 3},
 *     one Extend at a time (the client retries it on any session);</li>
 * <li>moves {@code V} forward on every confirmed extension;</li>
 * <li>starts stopping the command at {@code stopAt = V - killGrace - safety} if no extension
 *     moved {@code V} by then, or at once if the server says the token is not held (or the
 *     client gave the extend up): SIGTERM to the command and its descendants, SIGKILL at
 *     {@code min(now + killGrace, V - safety)};</li>
 * <li>{@code safety = clamp(lease / 10, 200 ms, 1 s)} covers this JVM's own scheduling delays
 *     and the kill itself.</li>
 * </ul>
 * A stopped command gives exit code {@link ExitCode#LOCK_LOST}; otherwise the command's own
 * status passes through. A SIGINT or SIGTERM to the command line stops the command the same way
 * and releases. Nothing can stop the command if the command line itself is SIGKILLed.
 */
final class RunCommand {

    private static final long MS = 1_000_000L;

    private final Context ctx;
    private final String key;
    private final long wait;
    private final int lease;
    /** {@code --shared [--limit N]}: a shared mode, or exclusive. */
    private final HoldMode mode;
    private final long killGraceNanos;
    private final long safetyNanos;
    private final long intervalNanos;
    private final List<String> command;

    private final Semaphore wake = new Semaphore(0);
    private Ticket ticket;
    private Process child;
    private boolean stopped;
    private boolean finished;
    private boolean signalled;

    RunCommand(Context ctx) throws UsageException {
        this.ctx = ctx;
        this.key = ctx.key();
        this.wait = ctx.waitMillis();
        this.lease = ctx.leaseSeconds();
        this.mode = ctx.holdMode();
        String grace = ctx.line().value("--kill-grace");
        long graceMs = grace == null ? 5_000 : Durations.millis("--kill-grace", grace);
        long leaseMs = lease * 1000L;
        long safetyMs = Math.min(1000, Math.max(200, leaseMs / 10));
        if (graceMs + safetyMs > leaseMs * 2 / 3) {
            long max = Math.max(0, leaseMs * 2 / 3 - safetyMs);
            throw new UsageException("--kill-grace " + Durations.format(graceMs) + " does not fit a " + lease
                    + "s lease: the command must be stopped well before the lease ends, so --kill-grace can be"
                    + " at most " + Durations.format(max) + " (2/3 of the lease minus " + safetyMs
                    + "ms); use a longer --lease or a shorter --kill-grace");
        }
        this.killGraceNanos = graceMs * MS;
        this.safetyNanos = safetyMs * MS;
        this.intervalNanos = Math.min(leaseMs, leaseMs - graceMs - safetyMs) * MS / 3;
        this.command = ctx.line().tail();
        if (command.isEmpty()) {
            throw new UsageException("run needs a command after '--', as in leasehold run --key K -- ./job.sh"
                    + " (see leasehold run --help)");
        }
    }

    int execute() throws UsageException, InterruptedException {
        try (LeaseholdClient client = ctx.client()) {
            AcquireOutcome outcome = Context.acquire(client, key, mode, wait, lease, ctx.value());
            if (!(outcome instanceof AcquireOutcome.Acquired acquired)) {
                return ctx.acquireFailure(key, wait, lease, outcome);
            }
            ticket = acquired.ticket();
            return supervise();
        }
    }

    private int supervise() throws InterruptedException {
        long validUntil = ticket.validUntilNanos();
        if (System.nanoTime() - stopAt(validUntil) >= 0) {
            release();
            ctx.warn("lock lost: the grant of " + Context.quote(key) + " came too late to leave time for the command");
            return ExitCode.LOCK_LOST.code();
        }
        long validUntilMs = Context.epochMillis(validUntil);
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        Map<String, String> env = pb.environment();
        env.put("LEASEHOLD_KEY", key);
        env.put("LEASEHOLD_TOKEN", Long.toUnsignedString(ticket.token()));
        env.put("LEASEHOLD_VALID_UNTIL_MS", Long.toString(validUntilMs));
        ctx.progress("acquired " + Context.quote(key) + " token " + Long.toUnsignedString(ticket.token())
                + ", valid until " + describe(validUntilMs) + "; extending every " + intervalNanos / MS + "ms");
        // The hook goes in first, so that a signal at any moment from here on stops the command.
        Thread hook = new Thread(this::onSignal, "leasehold-cli-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        synchronized (this) {
            if (signalled) {
                return ExitCode.INTERNAL.code(); // the JVM is exiting on a signal; the hook releases
            }
            try {
                child = pb.start();
            } catch (IOException e) {
                finished = true;
                release();
                removeHook(hook);
                ctx.warn("cannot start " + command.get(0) + ": " + e.getMessage());
                return ExitCode.CANNOT_START.code();
            }
        }
        child.onExit().thenRun(wake::release);
        String lost = watch();
        if (lost != null) {
            stop(lost, Math.min(System.nanoTime() + killGraceNanos, ticket.validUntilNanos() - safetyNanos));
        }
        child.waitFor();
        int code = lost != null ? ExitCode.LOCK_LOST.code() : child.exitValue();
        finish();
        removeHook(hook);
        return code;
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // shutting down on a signal: the hook finishes the job
        }
    }

    /** Extends until the command exits (null) or the lease is lost (the reason). */
    private String watch() throws InterruptedException {
        long validUntil = ticket.validUntilNanos();
        long nextExtend = System.nanoTime() + intervalNanos;
        CompletableFuture<ExtendOutcome> inflight = null;
        long lastConfirmed = System.nanoTime();
        while (child.isAlive()) {
            long now = System.nanoTime();
            if (inflight != null && inflight.isDone()) {
                ExtendOutcome r = outcome(inflight);
                inflight = null;
                if (r instanceof ExtendOutcome.Extended) {
                    validUntil = ticket.validUntilNanos();
                    lastConfirmed = now;
                    nextExtend = now + intervalNanos;
                    ctx.progress("extended " + Context.quote(key) + " token " + Long.toUnsignedString(ticket.token())
                            + ", valid until " + describe(Context.epochMillis(validUntil)));
                } else if (r instanceof ExtendOutcome.NotHeld) {
                    return "lock lost: the server says token " + Long.toUnsignedString(ticket.token()) + " of "
                            + Context.quote(key) + " is no longer held";
                } else {
                    return "lock lost: no extend of " + Context.quote(key) + " was confirmed before its lease"
                            + " could end";
                }
            }
            if (now - stopAt(validUntil) >= 0) {
                return "lock lost: no extend of " + Context.quote(key) + " confirmed for "
                        + Durations.format((now - lastConfirmed) / MS) + "; its validity ends in "
                        + Durations.format(Math.max(0, validUntil - now) / MS);
            }
            if (inflight == null && now - nextExtend >= 0) {
                inflight = ticket.extendAsync(lease);
                inflight.whenComplete((r, e) -> wake.release());
                continue;
            }
            long until = inflight == null ? Math.min(nextExtend - now, stopAt(validUntil) - now)
                    : stopAt(validUntil) - now;
            wake.tryAcquire(Math.max(until, 0), TimeUnit.NANOSECONDS);
        }
        return null;
    }

    private long stopAt(long validUntil) {
        return validUntil - killGraceNanos - safetyNanos;
    }

    private static ExtendOutcome outcome(CompletableFuture<ExtendOutcome> f) {
        try {
            return f.get();
        } catch (ExecutionException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return new ExtendOutcome.Expired();
        }
    }

    /** SIGTERM now, SIGKILL at {@code killAt}; once, whoever asks first (the watch or a signal). */
    private synchronized void stop(String reason, long killAt) throws InterruptedException {
        if (stopped || !child.isAlive()) {
            stopped = true;
            return;
        }
        stopped = true;
        ctx.warn(reason + "; stopping the command (pid " + child.pid() + "): SIGTERM now, SIGKILL in "
                + Durations.format(Math.max(0, killAt - System.nanoTime()) / MS) + " if still running");
        if (ProcessTree.terminate(child, killAt)) {
            ctx.progress("sent SIGKILL to what was left of the command");
        }
    }

    /** Releases the lock once; waits at most --timeout for the answer. */
    private synchronized void finish() {
        if (finished) {
            return;
        }
        finished = true;
        release();
    }

    private void release() {
        String t = Long.toUnsignedString(ticket.token());
        try {
            ReleaseOutcome r = ticket.releaseAsync().get(ctx.timeoutMillis(), TimeUnit.MILLISECONDS);
            if (r == ReleaseOutcome.RELEASED) {
                ctx.progress("released " + Context.quote(key) + " token " + t);
            } else if (r == ReleaseOutcome.NOT_HELD) {
                ctx.progress("token " + t + " was no longer held at release");
            } else {
                ctx.progress("no release of token " + t + " confirmed before its lease ended");
            }
            return;
        } catch (TimeoutException | ExecutionException | IllegalStateException e) {
            // below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ctx.warn("could not confirm the release of token " + t + "; if still held, " + Context.quote(key)
                + " frees itself when the lease ends");
    }

    /** Shutdown hook: SIGINT/SIGTERM to the command line stops the command and releases. */
    private void onSignal() {
        synchronized (this) {
            signalled = true;
            if (child == null) {
                finish();
                return;
            }
        }
        try {
            stop("signal received", Math.min(System.nanoTime() + killGraceNanos, ticket.validUntilNanos() - safetyNanos));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        finish();
    }

    private static String describe(long epochMillis) {
        return Context.instant(epochMillis) + " (epoch ms " + epochMillis + ")";
    }
}
