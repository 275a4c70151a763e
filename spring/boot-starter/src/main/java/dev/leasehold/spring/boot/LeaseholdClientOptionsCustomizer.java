package dev.leasehold.spring.boot;

import dev.leasehold.client.ClientOptions;

/** Adjusts the client's options after the {@code leasehold.client.*} properties were applied. */
@FunctionalInterface
public interface LeaseholdClientOptionsCustomizer {

    /** @param builder the options so far */
    void customize(ClientOptions.Builder builder);
}
