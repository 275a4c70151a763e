package dev.leasehold.store;

import java.util.Optional;

/**
 * Whether durable state can be written right now. Health reports DOWN while a problem is
 * present; grants that would need an unwritten value are answered Busy meanwhile.
 */
public interface StorageStatus {

    /** A description of the current write failure (naming the file), or empty when healthy. */
    Optional<String> problem();
}
