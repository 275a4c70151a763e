package dev.leasehold.spring.boot;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import dev.leasehold.client.AcquireObserver;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.shedlock.LeaseholdLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;

/**
 * A {@link LeaseholdLockProvider} bean when ShedLock and {@code leasehold-shedlock} are on the
 * class path, a {@link LeaseholdClient} exists, and the application defines no
 * {@link LockProvider} of its own. Use it with {@code @EnableSchedulerLock}.
 */
@AutoConfiguration(after = LeaseholdClientAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, LeaseholdLockProvider.class})
@ConditionalOnBean(LeaseholdClient.class)
@EnableConfigurationProperties(LeaseholdShedLockAutoConfiguration.Properties.class)
public class LeaseholdShedLockAutoConfiguration {

    /** The provider; closed (its timer thread) with the context. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockProvider.class)
    public LeaseholdLockProvider leaseholdLockProvider(LeaseholdClient client, Properties properties,
            ObjectProvider<AcquireObserver> observer) {
        LeaseholdLockProvider provider = InvalidLeaseholdPropertyException.make("leasehold.shedlock.key-prefix",
                properties.getKeyPrefix(), () -> new LeaseholdLockProvider(client, properties.getKeyPrefix()));
        observer.ifAvailable(provider::setAcquireObserver);
        return provider;
    }

    /** {@code leasehold.shedlock.*}. */
    @ConfigurationProperties("leasehold.shedlock")
    public static class Properties {

        /** Put before each ShedLock lock name to make the key on the server. */
        private String keyPrefix = "shedlock/";

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }
}
