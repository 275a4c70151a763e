/**
 * Spring wiring only: the {@code leasehold.*} settings ({@code LeaseholdProperties}, validated at
 * bind time and naming the property that is wrong), one {@code @Configuration} per mode
 * ({@code SingleNodeConfiguration}, {@code ClusterConfiguration}, chosen by
 * {@code @ConditionalOnClusterMode}, both behind the {@code NodeMode} seam), TLS, the Actuator
 * adapters, and the failure analyzer that explains an unusable data directory. Behaviour lives
 * in the packages these classes wire.
 */
package dev.leasehold.config;
