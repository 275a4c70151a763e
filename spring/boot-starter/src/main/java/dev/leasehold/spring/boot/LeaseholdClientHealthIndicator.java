package dev.leasehold.spring.boot;

import java.io.IOException;
import java.time.Duration;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.leasehold.client.LeaseholdClient;

/**
 * {@code leaseholdClient}: UP with the Ping round trip when a server answers, DOWN when none does
 * within the client's transport deadline. (The server's own indicator is called
 * {@code leasehold}.)
 */
public class LeaseholdClientHealthIndicator extends AbstractHealthIndicator {

    private final LeaseholdClient client;

    /** @param client the client to ping */
    public LeaseholdClientHealthIndicator(LeaseholdClient client) {
        super("Leasehold client health check failed");
        this.client = client;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws IOException {
        Duration rtt = client.ping();
        builder.up().withDetail("pingRttMicros", rtt.toNanos() / 1000);
    }
}
