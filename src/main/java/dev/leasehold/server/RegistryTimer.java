package dev.leasehold.server;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import dev.leasehold.registry.LockRegistry;

/**
 * Drives the registry's time: lease ends, wait ends and the end of a recovery grace happen on
 * this one thread, every {@value #PERIOD_MILLIS} ms, never on an event loop.
 */
public final class RegistryTimer implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(RegistryTimer.class);
    static final long PERIOD_MILLIS = 5;

    private final LockRegistry registry;
    private ScheduledExecutorService executor;

    public RegistryTimer(LockRegistry registry) {
        this.registry = registry;
    }

    @Override
    public synchronized void start() {
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "leasehold-timer");
            t.setDaemon(true);
            return t;
        });
        executor.scheduleAtFixedRate(this::tick, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void tick() {
        try {
            registry.advance();
        } catch (RuntimeException e) {
            LOG.error("Registry timer pass failed; continuing", e); // a dead timer would stop every lease end
        }
    }

    @Override
    public synchronized void stop() {
        if (executor != null) {
            executor.shutdownNow();
            executor = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return executor != null;
    }

    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 2048; // starts before the server, stops after it
    }
}
