package dev.leasehold;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.metrics.buffering.BufferingApplicationStartup;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The Leasehold lock server. Wiring lives in {@code dev.leasehold.config}. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class LeaseholdApplication {

    /** The common pool's parallelism unless the JVM is started with it set. */
    static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

    /**
     * A JVM system property (outside {@code leasehold.*}, which allows only real settings): N &gt; 0
     * records the first N steps of the start (Spring's {@link BufferingApplicationStartup}), served by
     * Actuator's {@code startup} endpoint once it is exposed. For measuring the start
     * (bench/NOTES.md, "Where the start goes"); off by default, as recording costs a little.
     */
    static final String STARTUP_STEPS = "dev.leasehold.startup-steps";

    /**
     * Starts the server. On a machine with fewer than 3 cores the JDK's common pool has one thread,
     * and {@code CompletableFuture}'s async steps then start a new thread per task (its
     * ThreadPerTaskExecutor): Ratis does one per appendEntries on a follower, which was a tenth of
     * a follower's CPU (bench/NOTES.md, "Where the cluster's CPU goes"). Two threads, as a 3-core
     * machine has, unless set otherwise; it must be set before the pool is first used.
     */
    public static void main(String[] args) {
        if (System.getProperty(COMMON_POOL_PARALLELISM) == null && Runtime.getRuntime().availableProcessors() < 3) {
            System.setProperty(COMMON_POOL_PARALLELISM, "2");
        }
        SpringApplication application = new SpringApplication(LeaseholdApplication.class);
        int steps = Integer.getInteger(STARTUP_STEPS, 0);
        if (steps > 0) {
            application.setApplicationStartup(new BufferingApplicationStartup(steps));
        }
        application.run(args);
    }
}
