package dev.leasehold.client.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Daemon threads with names that say which client and which role they serve. */
final class Threads implements ThreadFactory {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");

    private final String prefix;
    private final AtomicInteger count = new AtomicInteger();

    Threads(String prefix) {
        this.prefix = prefix;
    }

    @Override
    public Thread newThread(Runnable r) {
        return start(prefix + "-" + count.incrementAndGet(), r, false);
    }

    static Thread start(String name, Runnable r, boolean startNow) {
        Thread t = new Thread(() -> {
            try {
                r.run();
            } catch (Throwable e) {
                LOG.log(System.Logger.Level.ERROR, "unexpected failure in " + Thread.currentThread().getName(), e);
            }
        }, name);
        t.setDaemon(true);
        if (startNow) {
            t.start();
        }
        return t;
    }
}
