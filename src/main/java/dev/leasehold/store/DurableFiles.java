package dev.leasehold.store;

import java.nio.file.Path;

/**
 * Opens the durable values of the data directory. Production uses {@link #REAL}; a test can
 * supply another (as a Spring bean) to simulate a full or failing disk.
 */
@FunctionalInterface
public interface DurableFiles {

    /**
     * @param kind a word identifying the content, e.g. "tokens"
     */
    DurableValue open(Path file, String kind);

    DurableFiles REAL = DurableLong::new;
}
