package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * One durable number in the data directory. {@link DurableLong} is the real one; tests wrap it
 * to make writes fail (disk full, I/O error) without needing a real broken disk.
 */
public interface DurableValue {

    Path file();

    /**
     * The stored value, or empty if there is none yet.
     *
     * @throws CorruptStateException if the file exists but cannot be trusted
     */
    OptionalLong read() throws IOException;

    /** Durably replaces the value: when this returns, a crash cannot lose it. Blocking. */
    void write(long value) throws IOException;
}
