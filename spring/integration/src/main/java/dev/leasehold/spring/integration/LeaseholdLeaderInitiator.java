package dev.leasehold.spring.integration;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.log.LogAccessor;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.DefaultLeaderEventPublisher;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;

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
 * Spring Integration leader election over a Leasehold {@link Election} (docs/spring.md, "Leader
 * election"): a drop-in for {@code LockRegistryLeaderInitiator} with the same {@link Candidate},
 * the same {@link OnGrantedEvent}/{@link OnRevokedEvent} and the same lifecycle, but no heart
 * beat. The candidate waits in the server's FIFO queue of the key {@code si-leader/<role>}
 * (prefix settable) with its {@link Candidate#getId() id} as the leader's identity; a yield, a
 * stop or a lost lease hands the role to the next candidate in one round trip, and each term
 * carries a fencing token ({@link LeaseholdLeaderContext#term()}).
 *
 * <p>On a term: {@code candidate.onGranted(context)}, then {@link OnGrantedEvent}. At its end (a
 * {@link LeaseholdLeaderContext#yield() yield}, {@link #stop()}, a lost lease, the term's validity):
 * {@code candidate.onRevoked(context)}, then {@link OnRevokedEvent}, then the release, so the
 * next leader is granted only after this one was told. The candidate is called one call at a
 * time on a client delivery thread: return from {@code onGranted} soon and start long work
 * elsewhere, watching {@link LeaseholdLeaderContext#isLeader()}. An exception (or interrupt)
 * from {@code onGranted} ends the term (onRevoked, OnRevokedEvent, the release: the next candidate
 * leads) and the candidate queues again after a pause, as Spring Integration's initiator gives the
 * lock up and tries again after its busy wait: {@link ElectionOptions#backoffMin()} doubling up to
 * {@link ElectionOptions#backoffMax()} while its {@code onGranted} keeps failing.
 *
 * <p>Settings take effect at the next {@link #start()}. Thread-safe.
 */
public class LeaseholdLeaderInitiator implements SmartLifecycle, DisposableBean, ApplicationEventPublisherAware {

    /** The key prefix by default: the key is {@code si-leader/<role>}. */
    public static final String DEFAULT_KEY_PREFIX = "si-leader/";

    /** The phase by default, as Spring Integration's initiators: late to start, early to stop. */
    public static final int DEFAULT_PHASE = Integer.MAX_VALUE - 1000;

    private static final LogAccessor LOG = new LogAccessor(LeaseholdLeaderInitiator.class);

    private final LeaseholdClient client;
    private final Candidate candidate;
    private final Object lifecycle = new Object();

    // Settings, guarded by lifecycle:
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private String role;
    private ElectionOptions options = ElectionOptions.defaults();
    private Election election;
    private boolean autoStartup = true;
    private int phase = DEFAULT_PHASE;
    private LeaderEventPublisher leaderEventPublisher;
    private ApplicationEventPublisher applicationEventPublisher;

    /** The running campaign, or null when stopped; written under lifecycle. */
    private volatile Campaign campaign;
    /** The context of the term this candidate leads now, or null. */
    private volatile LeaseholdLeaderContext current;
    /** The campaign stopped after a failing onGranted, until the next one starts after the pause. */
    private volatile Campaign pausing;
    /** onGranted calls that failed in a row: the pause doubles with each. */
    private final AtomicInteger failuresInARow = new AtomicInteger();

    /**
     * An initiator for a {@link DefaultCandidate} with a random id and the role {@code leader}
     * (as {@code LockRegistryLeaderInitiator(registry)}).
     */
    public LeaseholdLeaderInitiator(LeaseholdClient client) {
        this(client, new DefaultCandidate(UUID.randomUUID().toString(), "leader"));
    }

    /**
     * An initiator for {@code candidate}: key {@code si-leader/<candidate.getRole()>}, identity
     * {@code candidate.getId()}, {@link ElectionOptions#defaults()} (lease 15 s, waits of 60 s).
     *
     * @throws IllegalArgumentException for a null argument, or a role or id the server cannot carry
     *         (a key over the server's key limit, an id over 1024 UTF-8 bytes)
     */
    public LeaseholdLeaderInitiator(LeaseholdClient client, Candidate candidate) {
        if (client == null || candidate == null) {
            throw new IllegalArgumentException("client and candidate must not be null");
        }
        this.client = client;
        this.candidate = candidate;
        synchronized (lifecycle) {
            role = candidate.getRole();
            election = election(keyPrefix, role, options);
        }
    }

    /** The election of these settings; it checks the key and the identity (it holds no resources). */
    private Election election(String prefix, String role, ElectionOptions opts) {
        return client.election(prefix + role, candidate.getId(), opts);
    }

    /**
     * The role campaigned for, instead of {@code candidate.getRole()}: the key's last part, the
     * contexts' {@code getRole()} and the events' role (the same candidate deployed for several
     * roles, say).
     *
     * @throws IllegalArgumentException for a null or blank role, or a key too long for the server
     */
    public void setRole(String role) {
        if (role == null || role.isBlank()) {
            throw new IllegalArgumentException("role must not be blank, was '" + role + "'");
        }
        synchronized (lifecycle) {
            election = election(keyPrefix, role, options);
            this.role = role;
        }
    }

    /** The role campaigned for: {@code candidate.getRole()} unless {@link #setRole} changed it. */
    public String getRole() {
        synchronized (lifecycle) {
            return role;
        }
    }

    /**
     * The server key's prefix, {@value #DEFAULT_KEY_PREFIX} by default: candidates with the same
     * prefix and role compete.
     *
     * @throws IllegalArgumentException for null, or a key too long for the server
     */
    public void setKeyPrefix(String keyPrefix) {
        if (keyPrefix == null) {
            throw new IllegalArgumentException("keyPrefix must not be null");
        }
        synchronized (lifecycle) {
            election = election(keyPrefix, role, options);
            this.keyPrefix = keyPrefix;
        }
    }

    /**
     * Each term's lease, 15 s by default, in whole seconds rounded up (1 to 255 s); the safety
     * becomes a tenth of it. A crashed leader is replaced at most this long after its last Extend;
     * a stopped or yielding one at once.
     *
     * @throws IllegalArgumentException for a lease out of range
     */
    public void setLeaseDuration(Duration lease) {
        if (lease == null) {
            throw new IllegalArgumentException("lease must not be null");
        }
        long millis = lease.toMillis();
        long seconds = millis <= 0 ? 0 : (millis + 999) / 1000;
        setElectionOptions(options().withLeaseSeconds((int) Math.min(seconds, Integer.MAX_VALUE)));
    }

    /**
     * How long one queued acquire waits on the server before it is sent again, 60 s by default (at
     * most the server's {@code leasehold.max-wait}). The candidate stays in the queue across these
     * waits: unlike a heart beat, this is not how fast it takes over.
     *
     * @throws IllegalArgumentException for a wait that is not positive or too long
     */
    public void setCampaignWait(Duration wait) {
        setElectionOptions(options().withCampaignWait(wait));
    }

    /** All the election's options at once (lease, campaign wait, safety, back-off). */
    public void setElectionOptions(ElectionOptions options) {
        if (options == null) {
            throw new IllegalArgumentException("options must not be null");
        }
        synchronized (lifecycle) {
            election = election(keyPrefix, role, options);
            this.options = options;
        }
    }

    /** The election's options. */
    public ElectionOptions options() {
        synchronized (lifecycle) {
            return options;
        }
    }

    /**
     * The election of the current settings: {@link Election#leader()} and {@link Election#observe}
     * tell who leads, this candidate or another.
     */
    public Election election() {
        synchronized (lifecycle) {
            return election;
        }
    }

    /** The candidate. */
    public Candidate getCandidate() {
        return candidate;
    }

    /**
     * The publisher of {@link OnGrantedEvent} and {@link OnRevokedEvent}; by default a
     * {@link DefaultLeaderEventPublisher} over the application context's event publisher.
     */
    public void setLeaderEventPublisher(LeaderEventPublisher publisher) {
        synchronized (lifecycle) {
            this.leaderEventPublisher = publisher;
        }
    }

    @Override
    public void setApplicationEventPublisher(ApplicationEventPublisher applicationEventPublisher) {
        synchronized (lifecycle) {
            this.applicationEventPublisher = applicationEventPublisher;
        }
    }

    /** Whether the context starts it (true by default). */
    public void setAutoStartup(boolean autoStartup) {
        synchronized (lifecycle) {
            this.autoStartup = autoStartup;
        }
    }

    @Override
    public boolean isAutoStartup() {
        synchronized (lifecycle) {
            return autoStartup;
        }
    }

    /** The lifecycle phase, {@link #DEFAULT_PHASE} by default. */
    public void setPhase(int phase) {
        synchronized (lifecycle) {
            this.phase = phase;
        }
    }

    @Override
    public int getPhase() {
        synchronized (lifecycle) {
            return phase;
        }
    }

    /**
     * The context of the term this candidate leads now, or a context without a term
     * ({@code isLeader()} false) when it does not lead.
     */
    public LeaseholdLeaderContext getContext() {
        LeaseholdLeaderContext c = current;
        return c != null ? c : LeaseholdLeaderContext.notLeading(getRole());
    }

    /**
     * Starts campaigning: the candidate queues on the server for its role. Idempotent.
     *
     * @throws IllegalStateException if the client is closed or speaks protocol revision 1.3
     */
    @Override
    public void start() {
        synchronized (lifecycle) {
            if (campaign != null) {
                return;
            }
            if (leaderEventPublisher == null && applicationEventPublisher != null) {
                leaderEventPublisher = new DefaultLeaderEventPublisher(applicationEventPublisher);
            }
            campaign = election.campaign(new Listener(role, leaderEventPublisher));
        }
    }

    /**
     * Stops campaigning: a leader yields (onRevoked, OnRevokedEvent, then the release, so the next
     * candidate leads one round trip later), a waiting candidate withdraws from the queue. Waits
     * for the server's answer at most the client's response grace plus its transport deadline.
     * Do not call it from the candidate's callbacks (the release waits for them to return): yield
     * the context there. Idempotent.
     */
    @Override
    public void stop() {
        Campaign c;
        synchronized (lifecycle) {
            c = campaign;
            campaign = null;
        }
        if (c != null) {
            CampaignEnd end = c.stop(); // outside the monitor: the candidate's callbacks may call getters
            if (end instanceof CampaignEnd.Unproven u) {
                LOG.warn(() -> "Stopped leader initiator for role " + getRole()
                        + " without proof that its grant ended (" + u.reason() + "); it ends with its lease");
            }
        }
    }

    /** True from {@link #start()} to {@link #stop()}, unless the client was closed meanwhile. */
    @Override
    public boolean isRunning() {
        Campaign c = campaign;
        return c != null && (!c.isStopped() || c == pausing);
    }

    /**
     * After a failing {@code onGranted}: ends campaign {@code failed} (its term is resigned, the
     * next candidate leads) and starts the next one after the pause, unless stopped meanwhile.
     */
    private void pauseAfterFailure(Campaign failed, ElectionOptions opts) {
        pausing = failed;
        int failures = failuresInARow.incrementAndGet();
        long max = opts.backoffMax().toNanos();
        long pause = opts.backoffMin().toNanos();
        for (int i = 1; i < failures && pause < max; i++) {
            pause = Math.min(max, pause * 2);
        }
        long pauseNanos = pause;
        // As Campaign.stop() bounds its wait: the response grace plus the transport deadline.
        long bound = client.options().responseGrace().plus(client.options().transportDeadline()).toNanos();
        failed.stopAsync().copy().completeOnTimeout(null, bound, TimeUnit.NANOSECONDS).whenComplete((end, e) ->
                CompletableFuture.delayedExecutor(pauseNanos, TimeUnit.NANOSECONDS).execute(() -> resumeAfter(failed)));
    }

    private void resumeAfter(Campaign failed) {
        synchronized (lifecycle) {
            if (campaign != failed) {
                return; // stopped (or stopped and started) during the pause
            }
            try {
                campaign = election.campaign(new Listener(role, leaderEventPublisher));
            } catch (IllegalStateException clientClosed) {
                LOG.warn(clientClosed, () -> "Leader initiator for role " + role + " cannot campaign again");
            } finally {
                pausing = null;
            }
        }
    }

    /** {@link #stop()}. */
    @Override
    public void destroy() {
        stop();
    }

    @Override
    public String toString() {
        return "LeaseholdLeaderInitiator{role=" + getRole() + ", id=" + candidate.getId() + "}";
    }

    /** One campaign's hearing: the candidate's callbacks and the events, in the campaign's order. */
    private final class Listener implements CampaignListener {

        private final String role;
        private final LeaderEventPublisher publisher;

        Listener(String role, LeaderEventPublisher publisher) {
            this.role = role;
            this.publisher = publisher;
        }

        @Override
        public void onStartedLeading(Leadership leadership) {
            LeaseholdLeaderContext context = new LeaseholdLeaderContext(role, leadership);
            current = context;
            try {
                candidate.onGranted(context);
            } catch (InterruptedException | RuntimeException e) {
                LOG.warn(e, () -> "Candidate " + candidate.getId() + " failed in onGranted for term "
                        + leadership.term() + "; yielding the role " + role + " and campaigning again after a pause");
                Campaign c = campaign;
                if (c != null && c.leadership().orElse(null) == leadership) {
                    pauseAfterFailure(c, c.election().options());
                } else {
                    leadership.resign(); // stopped or restarted meanwhile: only this term to end
                }
                return;
            }
            failuresInARow.set(0);
            if (publisher != null) {
                try {
                    publisher.publishOnGranted(LeaseholdLeaderInitiator.this, context, role);
                } catch (RuntimeException e) {
                    LOG.warn(e, () -> "Could not publish OnGrantedEvent for " + context);
                }
            }
        }

        /** A failed attempt to queue (the campaign retries after its back-off): SI's OnFailedToAcquireMutexEvent. */
        @Override
        public void onAttemptFailed(AcquireOutcome outcome) {
            LOG.warn(() -> "Candidate " + candidate.getId() + " could not queue for the role " + role + " ("
                    + outcome + "); trying again after a pause");
            if (publisher != null) {
                try {
                    publisher.publishOnFailedToAcquire(LeaseholdLeaderInitiator.this,
                            LeaseholdLeaderContext.notLeading(role), role);
                } catch (RuntimeException e) {
                    LOG.warn(e, () -> "Could not publish OnFailedToAcquireMutexEvent for the role " + role);
                }
            }
        }

        @Override
        public void onStoppedLeading(Leadership leadership, StopReason reason) {
            LeaseholdLeaderContext c = current;
            LeaseholdLeaderContext context = c != null && c.leadership().orElse(null) == leadership ? c
                    : new LeaseholdLeaderContext(role, leadership);
            if (c == context) {
                current = null;
            }
            try {
                candidate.onRevoked(context);
            } catch (RuntimeException e) {
                LOG.warn(e, () -> "Candidate " + candidate.getId() + " failed in onRevoked for term " + leadership.term());
            }
            if (publisher != null) {
                try {
                    publisher.publishOnRevoked(LeaseholdLeaderInitiator.this, context, role);
                } catch (RuntimeException e) {
                    LOG.warn(e, () -> "Could not publish OnRevokedEvent for " + context);
                }
            }
        }
    }
}
