package dev.leasehold.spring.boot;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import dev.leasehold.client.LeaseholdClient;

/**
 * {@code leaseholdClient} in {@code /actuator/health}: the Ping round trip, DOWN when no server
 * answers. Off with {@code management.health.leaseholdclient.enabled=false}.
 */
@AutoConfiguration(after = LeaseholdClientAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LeaseholdClient.class)
@ConditionalOnEnabledHealthIndicator("leaseholdclient")
public class LeaseholdClientHealthAutoConfiguration {

    /** The indicator. */
    @Bean
    @ConditionalOnMissingBean(name = "leaseholdClientHealthIndicator")
    public LeaseholdClientHealthIndicator leaseholdClientHealthIndicator(LeaseholdClient client) {
        return new LeaseholdClientHealthIndicator(client);
    }
}
