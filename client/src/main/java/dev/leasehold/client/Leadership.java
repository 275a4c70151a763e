package dev.leasehold.client;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.client.internal.Ticker;

/**
 * One term of a {@link Campaign}: this candidate leads from {@link CampaignListener#onStartedLeading}
 * until the first of {@link #validUntilNanos()}, a lost lease and {@link #resign()}. The term is the
 * grant's fencing token: pass it to the guarded resource with every write, so a leader paused past
 * its term is refused there (docs/election.md, "The promises"). Thread-safe.
 */
public final class Leadership {

    private final Campaign campaign;
    private final Ticket ticket;
    private final String identity;
    private final long safetyNanos;
    private final Ticker ticker;
    /** Set once when the term ends on this side; guarded by {@code this}. */
    private StopReason ended;
    /** The release at the end of the term (what {@link #resign()} returns). */
    final CompletableFuture<ReleaseOutcome> released = new CompletableFuture<>();
    /** {@code onStartedLeading} was called (on the campaign's serial executor only). */
    volatile boolean started;

    Leadership(Campaign campaign, Ticket ticket, String identity, long safetyNanos, Ticker ticker) {
        this.campaign = campaign;
        this.ticket = ticket;
        this.identity = identity;
        this.safetyNanos = safetyNanos;
        this.ticker = ticker;
    }

    /** The term: the grant's fencing token, higher than every earlier term of the key. */
    public long term() {
        return ticket.token();
    }

    /** The identity this candidate campaigned with. */
    public String identity() {
        return identity;
    }

    /** The election's key. */
    public String key() {
        return ticket.key();
    }

    /**
     * The end of this term as a {@link System#nanoTime()} value: the ticket's validity (moved on by
     * each successful Extend of the keep-alive) minus {@link ElectionOptions#safety()}.
     */
    public long validUntilNanos() {
        return ticket.validUntilNanos() - safetyNanos;
    }

    /** True while this candidate may act as leader: before {@link #validUntilNanos()}, not ended. */
    public boolean isValid() {
        synchronized (this) {
            if (ended != null) {
                return false;
            }
        }
        return ticket.isValid() && ticker.nanoTime() - validUntilNanos() < 0;
    }

    /** Why the term ended, or null while it lasts on this side. */
    public synchronized StopReason stopReason() {
        return ended;
    }

    /**
     * Sets the value observers see beside the term ({@link Ticket#proclaim(byte[])}): a leader's
     * address, say. Blocks until the outcome.
     */
    public ProclaimOutcome proclaim(byte[] value) {
        return ticket.proclaim(value);
    }

    /** {@link #proclaim(byte[])} with UTF-8 text. */
    public ProclaimOutcome proclaim(String value) {
        return proclaim(Arguments.notNull(value, "value").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Ends this term and hands the key to the next candidate: {@link #isValid()} is false at once,
     * {@link CampaignListener#onStoppedLeading} with {@link StopReason#RESIGNED} runs (after
     * {@code onStartedLeading} returned), then the grant is released, so the next candidate's
     * term begins one round trip later, and this candidate queues again at the tail. Never blocks;
     * safe to call from a listener. Idempotent.
     *
     * @return the release's outcome, completed off the client's I/O threads
     */
    public CompletableFuture<ReleaseOutcome> resign() {
        return campaign.endTerm(this, StopReason.RESIGNED);
    }

    /** The grant behind this term. */
    Ticket ticket() {
        return ticket;
    }

    /** Marks the term ended; true only for the first call. */
    synchronized boolean end(StopReason reason) {
        if (ended != null) {
            return false;
        }
        ended = reason;
        return true;
    }

    @Override
    public String toString() {
        return "Leadership[key=" + key() + ", term=" + term() + ", identity=" + identity
                + (stopReason() != null ? ", ended " + stopReason() : "") + "]";
    }
}
