package dev.leasehold.client.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.Campaign;
import dev.leasehold.client.CampaignEnd;
import dev.leasehold.client.CampaignListener;
import dev.leasehold.client.Election;
import dev.leasehold.client.ElectionOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Leadership;
import dev.leasehold.client.StopReason;

/**
 * {@code elect}: campaign for KEY with the Java {@link Election} (docs/election.md), run a command
 * while leading, resign when it exits. One term per invocation: a lost term stops the command and
 * the command line exits; a service manager restarts it to campaign again.
 *
 * <p><b>Timeline.</b> The term's validity {@code V} is {@link Leadership#validUntilNanos()} (the
 * ticket's validity minus the election's safety, moved on by the campaign's keep-alive, an Extend
 * every lease/3). As in {@code run}, the command must be dead before {@code V}: SIGTERM at
 * {@code V - killGrace - safety} unless an Extend moved {@code V} by then, or at once when the
 * term ends on the campaign's side (an Extend answered NotHeld); SIGKILL at
 * {@code min(now + killGrace, V - safety)}; {@code safety = clamp(lease / 10, 200 ms, 1 s)}, also
 * the election's. The term's release waits (in {@code onStoppedLeading}) for the command's death,
 * so the next leader's command never starts while this one runs.
 *
 * <p>Exit: the command's status after a resign; {@link ExitCode#LOCK_LOST} for a lost term;
 * {@link ExitCode#TIMED_OUT} when {@code --wait} passed before a term (the campaign withdrew); 130
 * or 143 on SIGINT or SIGTERM (the command stopped as {@code run} stops it, then resign, or
 * withdraw when not leading).
 */
final class ElectCommand implements CampaignListener {

    private static final long MS = 1_000_000L;
    private static final int DEFAULT_LEASE_SECONDS = 15;

    private final Context ctx;
    private final String key;
    private final String identity;
    private final int lease;
    /** {@code --wait}, or -1 for as long as it takes. */
    private final long waitMillis;
    private final long killGraceNanos;
    private final long safetyNanos;
    private final List<String> command;

    private final Semaphore wake = new Semaphore(0);
    /** Serializes the campaign's one stop (main thread, shutdown hook). */
    private final Object ending = new Object();
    private CampaignEnd end; // guarded by ending

    // Guarded by this:
    private Campaign campaign;
    private Leadership leadership;
    /** Past --wait, or signalled, before a term: a term delivered now is resigned, not used. */
    private boolean givenUp;
    private StopReason termEnded;
    /** The server's ACL refuses the key: waiting longer changes nothing (exit 73). */
    private AcquireOutcome.Forbidden forbidden;
    private boolean signalled;
    private Process child;
    private boolean stopping;

    ElectCommand(Context ctx) throws UsageException {
        this.ctx = ctx;
        this.key = ctx.key();
        String id = ctx.line().value("--identity");
        this.identity = id != null ? id : defaultIdentity();
        if (identity.isEmpty() || identity.getBytes(StandardCharsets.UTF_8).length > 1024) {
            throw new UsageException("--identity must be 1 to 1024 UTF-8 bytes (it is the grant's value)");
        }
        String l = ctx.line().value("--lease");
        this.lease = l == null ? DEFAULT_LEASE_SECONDS : ctx.leaseSeconds();
        this.waitMillis = ctx.line().value("--wait") == null ? -1 : ctx.waitMillis();
        if (waitMillis == 0) {
            throw new UsageException("--wait must be more than 0 for elect: a candidate waits in the queue"
                    + " (without --wait, as long as it takes)");
        }
        String grace = ctx.line().value("--kill-grace");
        long graceMs = grace == null ? 5_000 : Durations.millis("--kill-grace", grace);
        long leaseMs = lease * 1000L;
        long safetyMs = Math.min(1000, Math.max(200, leaseMs / 10));
        // The first Extend goes out at lease/3: SIGTERM (at V - grace - safety, V = validity - safety) must come later.
        if (graceMs + 2 * safetyMs > leaseMs * 2 / 3) {
            long max = Math.max(0, leaseMs * 2 / 3 - 2 * safetyMs);
            throw new UsageException("--kill-grace " + Durations.format(graceMs) + " does not fit a " + lease
                    + "s lease: the command must be stopped well before the term ends, so --kill-grace can be"
                    + " at most " + Durations.format(max) + " (2/3 of the lease minus twice " + safetyMs
                    + "ms); use a longer --lease or a shorter --kill-grace");
        }
        this.killGraceNanos = graceMs * MS;
        this.safetyNanos = safetyMs * MS;
        this.command = ctx.line().tail();
        if (command.isEmpty()) {
            throw new UsageException("elect needs a command after '--', as in leasehold elect --key K -- ./leader.sh"
                    + " (see leasehold elect --help)");
        }
    }

    /** {@code hostname:pid}: unique per process on a host, and says where the leader runs. */
    private static String defaultIdentity() {
        String host = null;
        try {
            host = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim(); // Linux: no name lookup
        } catch (IOException | RuntimeException e) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (IOException | RuntimeException e2) {
                // below
            }
        }
        return (host == null || host.isEmpty() ? "localhost" : host) + ":" + ProcessHandle.current().pid();
    }

    int execute() throws UsageException, InterruptedException {
        try (LeaseholdClient client = ctx.client()) {
            try {
                client.ping(); // an unreachable server is exit 68 now, not a campaign backing off forever
            } catch (IOException e) {
                return ctx.report(ExitCode.UNAVAILABLE, "unavailable: cannot reach " + ctx.servers() + " ("
                        + e.getMessage() + ")", fields("unavailable", String.valueOf(e.getMessage())));
            }
            Election election = client.election(key, identity, ElectionOptions.defaults().withLeaseSeconds(lease)
                    .withSafety(Duration.ofNanos(safetyNanos)));
            // The hook goes in first, so that a signal at any moment from here on resigns or withdraws.
            Thread hook = new Thread(this::onSignal, "leasehold-cli-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            synchronized (this) {
                if (signalled) {
                    return ExitCode.INTERNAL.code(); // the JVM is exiting on a signal
                }
                try {
                    campaign = election.campaign(this);
                } catch (IllegalStateException e) {
                    removeHook(hook);
                    return ctx.report(ExitCode.UNAVAILABLE, "unavailable: cannot campaign for " + Context.quote(key)
                            + ": " + e.getMessage(), fields("unavailable", e.getMessage()));
                }
            }
            ctx.progress("campaigning for " + Context.quote(key) + " as " + Context.quote(identity) + " (lease "
                    + lease + "s); waiting in its queue" + (waitMillis < 0 ? "" : " for at most "
                    + Durations.format(waitMillis)));
            Leadership l = awaitTerm();
            int code = l != null ? lead(l) : forbidden() != null ? refused() : timedOut();
            removeHook(hook);
            return code;
        }
    }

    /** The term, or null when --wait passed first. */
    private Leadership awaitTerm() throws InterruptedException {
        long deadline = System.nanoTime() + Math.max(0, waitMillis) * MS;
        while (true) {
            synchronized (this) {
                if (leadership != null) {
                    return leadership;
                }
                if (forbidden != null) {
                    givenUp = true;
                    return null;
                }
                if (waitMillis >= 0 && System.nanoTime() - deadline >= 0) {
                    givenUp = true;
                    return null;
                }
            }
            if (waitMillis < 0) {
                wake.acquire();
            } else {
                wake.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        }
    }

    private synchronized AcquireOutcome.Forbidden forbidden() {
        return forbidden;
    }

    /** The key is refused by the server's ACL: withdraw and exit 73, as acquire does. */
    private int refused() {
        endCampaign();
        AcquireOutcome.Forbidden f = forbidden();
        return ctx.report(ExitCode.FORBIDDEN, "forbidden: the server refuses " + Context.quote(key) + ": " + f.reason(),
                fields("forbidden", f.reason()));
    }

    private int timedOut() {
        CampaignEnd e = endCampaign();
        Map<String, Object> m = fields("timed_out", null);
        m.put(waitMillis % 1000 == 0 ? "wait_s" : "wait_ms", waitMillis % 1000 == 0 ? waitMillis / 1000 : waitMillis);
        return ctx.report(ExitCode.TIMED_OUT, "timed out: not elected for " + Context.quote(key) + " within the whole wait ("
                + Durations.format(waitMillis) + "); " + (e instanceof CampaignEnd.Unproven
                        ? "no proof of the withdrawal came: a grant, if any, ends with its lease"
                        : "withdrew from its queue"), m);
    }

    /** Runs the command for term {@code l}; returns the exit code. */
    private int lead(Leadership l) throws InterruptedException {
        String term = Long.toUnsignedString(l.term());
        if (System.nanoTime() - stopAt(l) >= 0) {
            endCampaign();
            ctx.warn("lock lost: term " + term + " of " + Context.quote(key) + " began too late to leave time for the command");
            return ended(ExitCode.LOCK_LOST, l, "began too late");
        }
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        Map<String, String> env = pb.environment();
        env.put("LEASEHOLD_KEY", key);
        env.put("LEASEHOLD_IDENTITY", identity);
        env.put("LEASEHOLD_TERM", term);
        env.put("LEASEHOLD_TOKEN", term);
        long validUntilMs = Context.epochMillis(l.validUntilNanos());
        if (ctx.json()) {
            Map<String, Object> m = fields("elected", null);
            m.put("term", Context.unsigned(l.term()));
            m.put("valid_until_ms", validUntilMs);
            m.put("lease_s", lease);
            line(Json.object(m));
        }
        ctx.progress("elected: " + Context.quote(key) + " term " + term + " as " + Context.quote(identity)
                + ", valid until " + Context.instant(validUntilMs) + "; starting " + command.get(0));
        Process c;
        String notStarted = null;
        synchronized (this) {
            if (signalled) {
                return ExitCode.INTERNAL.code(); // the JVM is exiting on a signal; the hook resigns
            }
            if (termEnded == null) {
                try {
                    child = pb.start();
                } catch (IOException e) {
                    notStarted = e.getMessage();
                }
            }
            c = child;
        }
        if (c == null) {
            endCampaign();
            if (notStarted != null) {
                ctx.warn("cannot start " + command.get(0) + ": " + notStarted + "; resigned term " + term);
                return ended(ExitCode.CANNOT_START, l, "cannot start: " + notStarted);
            }
            String why = "lock lost: term " + term + " of " + Context.quote(key) + " ended before the command started";
            ctx.warn(why);
            return ended(ExitCode.LOCK_LOST, l, why);
        }
        c.onExit().thenRun(wake::release);
        String lost = watch(l, c);
        if (lost != null) {
            stopCommand(lost, l);
        }
        c.waitFor();
        endCampaign();
        if (lost != null) {
            return ended(ExitCode.LOCK_LOST, l, lost);
        }
        int code = c.exitValue();
        if (ctx.json()) {
            Map<String, Object> m = fields("resigned", null);
            m.put("term", Context.unsigned(l.term()));
            m.put("exit_code", code);
            line(Json.object(m));
        }
        return code;
    }

    /** Waits while the command runs: null when it exits, else why the term is lost. */
    private String watch(Leadership l, Process c) throws InterruptedException {
        String term = Long.toUnsignedString(l.term());
        while (c.isAlive()) {
            StopReason ended;
            synchronized (this) {
                ended = termEnded;
            }
            if (ended != null) {
                return "lock lost: term " + term + " of " + Context.quote(key) + " ended: " + (ended == StopReason.LEASE_LOST
                        ? "its lease was lost (an extend answered not held, or none was confirmed in time)"
                        : "its keep-alive gave up (an extend failed)");
            }
            long now = System.nanoTime();
            long stopAt = stopAt(l);
            if (now - stopAt >= 0) {
                return "lock lost: no extend of term " + term + " of " + Context.quote(key)
                        + " confirmed in time; its validity ends in " + Durations.format(Math.max(0,
                                l.validUntilNanos() - now) / MS);
            }
            wake.tryAcquire(stopAt - now, TimeUnit.NANOSECONDS);
        }
        return null;
    }

    private long stopAt(Leadership l) {
        return l.validUntilNanos() - killGraceNanos - safetyNanos;
    }

    /** SIGTERM now, SIGKILL before the term's validity ends; once, whoever asks first. */
    private void stopCommand(String reason, Leadership l) throws InterruptedException {
        Process c;
        synchronized (this) {
            if (stopping || child == null || !child.isAlive()) {
                stopping = true;
                return;
            }
            stopping = true;
            c = child;
        }
        long killAt = Math.min(System.nanoTime() + killGraceNanos, l.validUntilNanos() - safetyNanos);
        ctx.warn(reason + "; stopping the command (pid " + c.pid() + "): SIGTERM now, SIGKILL in "
                + Durations.format(Math.max(0, killAt - System.nanoTime()) / MS) + " if still running");
        if (ProcessTree.terminate(c, killAt)) {
            ctx.progress("sent SIGKILL to what was left of the command");
        }
    }

    /** Stops the campaign once (resign if leading, else withdraw) and says what its answer proved. */
    private CampaignEnd endCampaign() {
        synchronized (ending) {
            if (end != null) {
                return end;
            }
            Campaign c;
            synchronized (this) {
                c = campaign;
            }
            end = c == null ? new CampaignEnd.Idle() : c.stop();
            if (end instanceof CampaignEnd.Resigned r) {
                ctx.progress("resigned " + Context.quote(key) + " term " + Long.toUnsignedString(r.term()) + " ("
                        + r.release() + ")");
            } else if (end instanceof CampaignEnd.Unproven u) {
                ctx.warn("could not confirm the end of the campaign for " + Context.quote(key) + " (" + u.reason()
                        + "); a grant, if any, ends with its lease");
            } else {
                ctx.progress("withdrew from the queue of " + Context.quote(key));
            }
            return end;
        }
    }

    /** The end of a term that did not resign normally: a JSON line with --json (the warning said it already). */
    private int ended(ExitCode code, Leadership l, String reason) {
        if (ctx.json()) {
            Map<String, Object> m = fields(code == ExitCode.LOCK_LOST ? "lock_lost" : "cannot_start", reason);
            m.put("term", Context.unsigned(l.term()));
            line(Json.object(m));
        }
        return code.code();
    }

    private Map<String, Object> fields(String outcome, String reason) {
        Map<String, Object> m = Context.fields(outcome);
        m.put("key", key);
        m.put("identity", identity);
        if (reason != null) {
            m.put("reason", reason);
        }
        return m;
    }

    private void line(String text) {
        synchronized (ctx) {
            ctx.out().println(text);
            ctx.out().flush();
        }
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // shutting down on a signal: the hook finishes the job
        }
    }

    /** Shutdown hook: SIGINT/SIGTERM stops the command (if running), then resigns or withdraws. */
    private void onSignal() {
        Process c;
        Leadership l;
        synchronized (this) {
            signalled = true;
            givenUp = leadership == null;
            c = child;
            l = leadership;
        }
        wake.release();
        try {
            if (c != null) {
                stopCommand("signal received", l);
                c.waitFor(killGraceNanos / MS + 3000, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        endCampaign();
    }

    // CampaignListener: one call at a time, on a client delivery thread.

    @Override
    public void onStartedLeading(Leadership l) {
        synchronized (this) {
            if (givenUp || leadership != null) {
                return; // the stop under way resigns it
            }
            leadership = l;
        }
        wake.release();
    }

    /**
     * The term ended on the campaign's side: no next campaign, and the release (after this
     * returns) waits for the command's death, so the next leader's command starts after it.
     */
    @Override
    public void onStoppedLeading(Leadership l, StopReason reason) {
        Campaign c;
        Process p;
        synchronized (this) {
            termEnded = reason;
            c = campaign;
            p = child;
        }
        wake.release();
        c.stopAsync(); // one term per invocation: do not queue again
        if (p != null && p.isAlive()) {
            try {
                p.waitFor(killGraceNanos / MS + 3000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A failed attempt: said on stderr; a refusal by the ACL ends the wait (the others are retried). */
    @Override
    public void onAttemptFailed(AcquireOutcome outcome) {
        if (outcome instanceof AcquireOutcome.Forbidden f) {
            synchronized (this) {
                forbidden = f;
            }
            wake.release();
            return;
        }
        ctx.progress("campaign attempt for " + Context.quote(key) + " failed (" + outcome + "); trying again");
    }

    @Override
    public void onNewLeader(long term, String leader) {
        ctx.progress("leader of " + Context.quote(key) + ": term " + Long.toUnsignedString(term) + " "
                + Context.quote(leader));
    }

    @Override
    public void onNoLeader() {
        ctx.progress("no leader of " + Context.quote(key));
    }

    @Override
    public void onLeaderUnknown(String reason) {
        ctx.progress("leader of " + Context.quote(key) + " unknown (" + reason + ")");
    }
}
