package dev.leasehold.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;

/**
 * Marks an integration test whose time is mostly real fault time: server processes killed,
 * stopped, cut off or restarted, election timeouts and leases that must pass, a schedule of
 * faults under load. {@code ./mvnw -B verify} leaves these out so that the everyday suite stays
 * near ten minutes; {@code ./mvnw -B -Pfaults verify} runs them (and only them), and CI
 * ({@code .ci/run}) runs both commands, so nothing marked here goes unchecked before it lands.
 *
 * <p>A test belongs here when it is a fault schedule or a run under faults that takes tens of
 * seconds; the behaviour each one checks is also reached, more briefly, by a test of the
 * everyday suite (failover in {@code ClusterTlsIntegrationTests} and
 * {@code ClusterCheckIntegrationTests}, restart in {@code RestartIntegrationTests}, a member
 * added online in {@code ClusterTlsMembershipIntegrationTests}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Tag(FaultRun.TAG)
public @interface FaultRun {
    /** The JUnit tag, named in the build's Failsafe configuration (pom.xml). */
    String TAG = "faults";
}
