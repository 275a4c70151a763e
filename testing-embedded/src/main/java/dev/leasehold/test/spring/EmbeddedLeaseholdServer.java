package dev.leasehold.test.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a Spring test class ({@code @SpringBootTest}, {@code @SpringJUnitConfig}, ...): starts a
 * real Leasehold server (or cluster) in the test's JVM before the application context, sets
 * {@code leasehold.client.servers} to its address (so the starter's client, LockRegistry and
 * ShedLock provider connect to it, with no {@code @DynamicPropertySource}), registers it as a bean
 * ({@link dev.leasehold.test.TestingServer} or {@link dev.leasehold.test.TestingCluster}) and
 * stops it when the context closes. Contexts are cached as usual: test classes with the same
 * configuration and the same {@code nodes} share one context and so one server.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface EmbeddedLeaseholdServer {

    /** 1: a single server; 3 (or 5): a cluster, and {@code leasehold.client.servers} lists every node. */
    int nodes() default 1;

    /** The property set to the address(es); change it where the application reads another name. */
    String property() default "leasehold.client.servers";
}
