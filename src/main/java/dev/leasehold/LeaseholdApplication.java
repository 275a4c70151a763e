package dev.leasehold;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The Leasehold lock server. Wiring lives in {@code dev.leasehold.config}. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class LeaseholdApplication {

    /** The common pool's parallelism unless the JVM is started with it set. */
    static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

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
        SpringApplication.run(LeaseholdApplication.class, args);
    }
}
