package dev.leasehold.client;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

import dev.leasehold.client.internal.Engine;

/**
 * A leader election on one key ({@link LeaseholdClient#election}, docs/election.md): candidates
 * {@link #campaign} in the key's FIFO queue, the leader's <b>term is its grant's fencing token</b>,
 * and everyone can {@link #observe} who leads, pushed by the server. No polling anywhere: a
 * candidate waits in line, a resign hands the key to the next candidate in one round trip.
 *
 * <pre>{@code
 * Election election = client.election("scheduler/leader", "node-1", ElectionOptions.defaults());
 * try (Campaign campaign = election.campaign(new CampaignListener() {
 *     public void onStartedLeading(Leadership l) { scheduler.start(l); }   // fence writes with l.term()
 *     public void onStoppedLeading(Leadership l, StopReason why) { scheduler.stop(); }
 * })) {
 *     awaitShutdown();
 * }   // resigns if leading, else withdraws from the queue
 * }</pre>
 *
 * Thread-safe; an election holds no resources of its own (campaigns and observations do).
 */
public final class Election {

    private final Engine engine;
    private final KeepAliveTimer keepAlives;
    private final String key;
    private final String identity;
    private final byte[] identityBytes;
    private final ElectionOptions options;
    /** The tracker that last heard an event, for {@link #leader()}; guarded by {@code this}. */
    private LeaderTracker latest;

    Election(Engine engine, KeepAliveTimer keepAlives, String key, String identity, ElectionOptions options) {
        this.engine = engine;
        this.keepAlives = keepAlives;
        Arguments.key(key);
        this.key = key;
        this.identity = Arguments.notNull(identity, "identity");
        this.identityBytes = Arguments.value(identity.getBytes(StandardCharsets.UTF_8));
        this.options = Arguments.notNull(options, "options");
    }

    /** The election's key. */
    public String key() {
        return key;
    }

    /** The identity this client's campaigns carry as their grants' value. */
    public String identity() {
        return identity;
    }

    /** The options of this election's campaigns. */
    public ElectionOptions options() {
        return options;
    }

    /**
     * Starts a campaign: this client waits in the key's queue until it leads, then leads until its
     * term ends, then queues again, until the campaign is closed ({@link Campaign}).
     *
     * @param listener hears this candidate's terms and every leader, on a client delivery thread
     * @throws IllegalArgumentException for a null listener
     * @throws IllegalStateException if the client is closed or speaks revision 1.3 (elections
     *         need observations and values, 1.4)
     */
    public Campaign campaign(CampaignListener listener) {
        return new Campaign(this, engine, Arguments.notNull(listener, "listener")).start();
    }

    /**
     * Follows who leads, without campaigning: {@code listener} hears the current leader (or none),
     * every new term, proclaims, and unknown gaps, until the observation is closed.
     *
     * @throws IllegalArgumentException for a null listener
     * @throws IllegalStateException if the client is closed or speaks revision 1.3
     */
    public Observation observe(LeaderListener listener) {
        LeaderTracker t = new LeaderTracker(Arguments.notNull(listener, "listener"), new SerialExecutor(Runnable::run));
        return observe(t);
    }

    /**
     * The leader as last observed by this election's campaigns and observations, or empty when
     * nobody leads, it is not known (a gap), or nothing was observed yet.
     * Never a grant: the leader may have stepped down since.
     */
    public Optional<Leader> leader() {
        LeaderTracker t;
        synchronized (this) {
            t = latest;
        }
        return t == null ? Optional.empty() : t.leader();
    }

    /** {@code tracker}, remembered for {@link #leader()} whenever it hears something. */
    ObservationListener tracking(LeaderTracker tracker) {
        return new ObservationListener() {
            @Override
            public void event(KeyEvent event) {
                tracker.event(event);
                heard(tracker);
            }

            @Override
            public void unknown(String reason) {
                tracker.unknown(reason);
                heard(tracker);
            }
        };
    }

    private synchronized void heard(LeaderTracker tracker) {
        latest = tracker;
    }

    /** Observes the key for {@code tracker}, as {@link LeaseholdClient#observe} does. */
    Observation observe(LeaderTracker tracker) {
        return new Observation(engine.observe(key, Arguments.key(key), Observation.adapter(key, tracking(tracker))));
    }

    /** {@code c} is open: the client's close stops it first. */
    void enlist(Campaign c) {
        keepAlives.enlist(c);
    }

    void discharge(Campaign c) {
        keepAlives.discharge(c);
    }

    /** Keeps a term's ticket alive, as {@link LeaseholdClient#keepAlive} does. */
    KeepAlive keepAlive(Ticket ticket, LeaseListener listener) {
        return keepAlives.keep(ticket, options.leaseSeconds(), listener);
    }

    byte[] identityBytes() {
        return identityBytes.clone();
    }

    @Override
    public String toString() {
        return "Election[key=" + key + ", identity=" + identity + "]";
    }
}
