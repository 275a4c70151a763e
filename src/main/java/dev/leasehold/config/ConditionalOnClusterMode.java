package dev.leasehold.config;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;

/**
 * Matches in cluster mode: when {@code leasehold.cluster.node-id} is set (PROTOCOL.md section 10).
 * The one place that says what cluster mode is; every cluster bean, and the single-node
 * configuration's opposite condition, use it. A property condition rather than
 * {@code @ConditionalOnBean(ClusterNode.class)}, which would depend on the order in which the
 * configuration classes are read.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ConditionalOnProperty(prefix = "leasehold.cluster", name = "node-id")
@interface ConditionalOnClusterMode {
}
