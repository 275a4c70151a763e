/**
 * Spring wiring only: the {@code leasehold.*} settings ({@code LeaseholdProperties}, validated at
 * bind time and naming the property that is wrong), one {@code @Configuration} per mode
 * ({@code SingleNodeConfiguration}, {@code ClusterConfiguration}, chosen by
 * {@code @ConditionalOnClusterMode}, both behind the {@code NodeMode} seam), TLS, the Actuator
 * adapters, and the failure analyzers that turn a start-up error (a setting that cannot be used,
 * a {@code dev.leasehold.settings.SettingException}; an unknown setting; an unusable data
 * directory) into Spring Boot's short report. Behaviour lives in the packages these classes wire.
 */
package dev.leasehold.config;
