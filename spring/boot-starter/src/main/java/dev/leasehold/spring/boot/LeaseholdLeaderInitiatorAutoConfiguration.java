package dev.leasehold.spring.boot;

import java.time.Duration;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import dev.leasehold.client.ElectionOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.spring.integration.LeaseholdLeaderInitiator;

/**
 * A {@link LeaseholdLeaderInitiator} bean for the application's {@link Candidate} when
 * {@code leasehold.integration.leader.enabled=true}, Spring Integration and
 * {@code leasehold-spring-integration} are on the class path, a {@link LeaseholdClient} exists,
 * and the application defines no initiator of its own (neither a {@code LeaseholdLeaderInitiator}
 * nor a {@link LockRegistryLeaderInitiator}). A {@link LeaderEventPublisher} bean, if any,
 * publishes its events; else the application context does.
 */
@AutoConfiguration(after = LeaseholdClientAutoConfiguration.class)
@ConditionalOnClass({Candidate.class, LeaseholdLeaderInitiator.class})
@ConditionalOnProperty(prefix = "leasehold.integration.leader", name = "enabled", havingValue = "true")
@ConditionalOnBean({LeaseholdClient.class, Candidate.class})
@EnableConfigurationProperties(LeaseholdLeaderInitiatorAutoConfiguration.Properties.class)
public class LeaseholdLeaderInitiatorAutoConfiguration {

    private static final String PREFIX = "leasehold.integration.leader.";

    /** The initiator; a {@code SmartLifecycle}, started with the context unless auto-startup is off. */
    @Bean
    @ConditionalOnSingleCandidate(Candidate.class)
    @ConditionalOnMissingBean({LeaseholdLeaderInitiator.class, LockRegistryLeaderInitiator.class})
    public LeaseholdLeaderInitiator leaseholdLeaderInitiator(LeaseholdClient client, Candidate candidate,
            Properties properties, ObjectProvider<LeaderEventPublisher> publisher) {
        LeaseholdLeaderInitiator initiator = InvalidLeaseholdPropertyException.make(PREFIX + "role",
                candidate.getRole(), () -> new LeaseholdLeaderInitiator(client, candidate));
        InvalidLeaseholdPropertyException.apply(PREFIX + "key-prefix", properties.getKeyPrefix(),
                () -> initiator.setKeyPrefix(properties.getKeyPrefix()));
        if (properties.getRole() != null) {
            InvalidLeaseholdPropertyException.apply(PREFIX + "role", properties.getRole(),
                    () -> initiator.setRole(properties.getRole()));
        }
        InvalidLeaseholdPropertyException.apply(PREFIX + "lease", properties.getLease(),
                () -> initiator.setLeaseDuration(properties.getLease()));
        InvalidLeaseholdPropertyException.apply(PREFIX + "campaign-wait", properties.getCampaignWait(),
                () -> initiator.setCampaignWait(properties.getCampaignWait()));
        initiator.setAutoStartup(properties.isAutoStartup());
        initiator.setPhase(properties.getPhase());
        publisher.ifAvailable(initiator::setLeaderEventPublisher);
        return initiator;
    }

    /** {@code leasehold.integration.leader.*}. */
    @ConfigurationProperties("leasehold.integration.leader")
    public static class Properties {

        /** Make a LeaseholdLeaderInitiator for the application's Candidate bean. */
        private boolean enabled;

        /** The role campaigned for, instead of the Candidate's getRole(): the server key is KEY-PREFIX + ROLE. */
        private String role;

        /** Put before the role to make the key on the server. */
        private String keyPrefix = LeaseholdLeaderInitiator.DEFAULT_KEY_PREFIX;

        /** Lease of each term (whole seconds, rounded up; 1 to 255 s): how long a crashed leader holds the role. */
        private Duration lease = Duration.ofSeconds(ElectionOptions.defaults().leaseSeconds());

        /** How long one queued acquire waits on the server before it is sent again (the candidate stays queued). */
        private Duration campaignWait = ElectionOptions.defaults().campaignWait();

        /** Start campaigning with the application context. */
        private boolean autoStartup = true;

        /** The initiator's SmartLifecycle phase. */
        private int phase = LeaseholdLeaderInitiator.DEFAULT_PHASE;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getRole() {
            return role;
        }

        public void setRole(String role) {
            this.role = role;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }

        public Duration getCampaignWait() {
            return campaignWait;
        }

        public void setCampaignWait(Duration campaignWait) {
            this.campaignWait = campaignWait;
        }

        public boolean isAutoStartup() {
            return autoStartup;
        }

        public void setAutoStartup(boolean autoStartup) {
            this.autoStartup = autoStartup;
        }

        public int getPhase() {
            return phase;
        }

        public void setPhase(int phase) {
            this.phase = phase;
        }
    }
}
