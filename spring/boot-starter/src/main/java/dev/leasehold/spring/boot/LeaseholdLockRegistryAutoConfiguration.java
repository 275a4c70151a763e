package dev.leasehold.spring.boot;

import java.time.Duration;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;

import dev.leasehold.client.AcquireObserver;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.spring.integration.LeaseLostListener;
import dev.leasehold.spring.integration.LeaseholdLockRegistry;

/**
 * A {@link LeaseholdLockRegistry} bean when Spring Integration and
 * {@code leasehold-spring-integration} are on the class path, a {@link LeaseholdClient} exists,
 * and the application defines no {@link LockRegistry} of its own. Lease-lost listeners among the
 * beans all hear lost leases.
 */
@AutoConfiguration(after = LeaseholdClientAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, LeaseholdLockRegistry.class})
@ConditionalOnBean(LeaseholdClient.class)
@EnableConfigurationProperties(LeaseholdLockRegistryAutoConfiguration.Properties.class)
public class LeaseholdLockRegistryAutoConfiguration {

    /** The registry. */
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    public LeaseholdLockRegistry leaseholdLockRegistry(LeaseholdClient client, Properties properties,
            ObjectProvider<LeaseLostListener> listeners, ObjectProvider<AcquireObserver> observer) {
        String prefix = "leasehold.integration.lock.";
        LeaseholdLockRegistry registry = InvalidLeaseholdPropertyException.make(prefix + "registry-key",
                properties.getRegistryKey(), () -> new LeaseholdLockRegistry(client, properties.getRegistryKey()));
        registry.setRenewal(properties.isRenew()); // first: a lease over 255 s needs renewal
        InvalidLeaseholdPropertyException.apply(prefix + "lease", properties.getLease(),
                () -> registry.setLeaseDuration(properties.getLease()));
        InvalidLeaseholdPropertyException.apply(prefix + "cache-capacity", properties.getCacheCapacity(),
                () -> registry.setCacheCapacity(properties.getCacheCapacity()));
        InvalidLeaseholdPropertyException.apply(prefix + "unavailable-timeout", properties.getUnavailableTimeout(),
                () -> registry.setUnavailableTimeout(properties.getUnavailableTimeout()));
        registry.setLeaseLostListener((key, token, reason) -> listeners.orderedStream()
                .forEach(l -> l.leaseLost(key, token, reason)));
        observer.ifAvailable(registry::setAcquireObserver);
        return registry;
    }

    /** Counts lost leases as {@code leasehold.client.lease.lost} (tags api, reason) when Micrometer is there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class LeaseLostCounter {

        @Bean
        LeaseLostListener leaseholdLeaseLostCounter(
                ObjectProvider<io.micrometer.core.instrument.MeterRegistry> meters) {
            return (key, token, reason) -> meters.ifAvailable(m -> m.counter("leasehold.client.lease.lost",
                    "api", "spring-integration", "reason", reason.name()).increment());
        }
    }

    /** {@code leasehold.integration.lock.*}. */
    @ConfigurationProperties("leasehold.integration.lock")
    public static class Properties {

        /** Names the registry's keys on the server: si/REGISTRY-KEY/key. */
        private String registryKey = "default";

        /** Lease of each grant (whole seconds, rounded up). */
        private Duration lease = LeaseholdLockRegistry.DEFAULT_LEASE;

        /** Extend held locks every third of the lease until unlock. */
        private boolean renew = true;

        /** Lock objects cached at most. */
        private int cacheCapacity = LeaseholdLockRegistry.DEFAULT_CAPACITY;

        /** How long lock() retries while no server is reachable before CannotAcquireLockException. */
        private Duration unavailableTimeout = LeaseholdLockRegistry.DEFAULT_UNAVAILABLE_TIMEOUT;

        public String getRegistryKey() {
            return registryKey;
        }

        public void setRegistryKey(String registryKey) {
            this.registryKey = registryKey;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }

        public boolean isRenew() {
            return renew;
        }

        public void setRenew(boolean renew) {
            this.renew = renew;
        }

        public int getCacheCapacity() {
            return cacheCapacity;
        }

        public void setCacheCapacity(int cacheCapacity) {
            this.cacheCapacity = cacheCapacity;
        }

        public Duration getUnavailableTimeout() {
            return unavailableTimeout;
        }

        public void setUnavailableTimeout(Duration unavailableTimeout) {
            this.unavailableTimeout = unavailableTimeout;
        }
    }
}
