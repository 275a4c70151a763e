package dev.leasehold.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a real Leasehold server (or cluster) in the test's JVM for a JUnit 5 test class or method,
 * through {@link LeaseholdServerExtension}. On a class it starts once before all tests and stops
 * after them (or once per test with {@code perMethod = true}); on a method, for that method.
 * Test methods, constructors and lifecycle methods get it as a parameter: {@link TestingServer}
 * (one node), {@link TestingCluster} (with {@code nodes = 3}), or a ready
 * {@code dev.leasehold.client.LeaseholdClient} connected to it and closed with it.
 *
 * <pre>{@code
 * @WithLeaseholdServer
 * class OrderJobTests {
 *     @Test
 *     void onlyOneRuns(LeaseholdClient client, TestingServer server) { ... }
 * }
 * }</pre>
 *
 * For a Spring test whose application connects by {@code leasehold.client.servers}, use
 * {@link dev.leasehold.test.spring.EmbeddedLeaseholdServer} instead.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(LeaseholdServerExtension.class)
public @interface WithLeaseholdServer {

    /** 1: a single server ({@link TestingServer}); 3 (or 5): a cluster ({@link TestingCluster}). */
    int nodes() default 1;

    /** On a class: a fresh server for every test method instead of one for the class. */
    boolean perMethod() default false;
}
